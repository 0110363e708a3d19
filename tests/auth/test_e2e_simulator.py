"""End to end against the bundled tenant simulator's authorization server: the test acts as the browser on its
login page, the app's real loopback listener takes the redirect, tokens come from its /oauth/token (Auth0
statuses: 403 invalid_grant). Negative ID tokens come from the simulator's `id_token_*` fault knobs."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
import sys
import threading

import httpx
import pytest

from helpers.browser import act_as_browser, cli_login
from helpers.sign_ins import forget_token, stored_token
from tenant_events.auth.errors import SignInFailed, TokenEndpointError
from tenant_events.auth.secret_store import MemorySecretStore
from tenant_events.auth.sign_in import SignInOptions, sign_in
from tenant_events.errors import SignInRequired
from tenant_events.http import api_client
from tenant_events.settings import make_profile

REAL_KEYRING = os.environ.get("TENANT_EVENTS_REAL_KEYRING") == "1"


def profile_for(sim):
    return make_profile(auth_url=sim.auth_url, client_id=sim.demo_client_id, name="sim")


class Browser:
    """Opener: hands the URL to the headless browser in a thread; keeps the final redirect URL."""

    def __init__(self, action: str = "allow") -> None:
        self.action = action
        self.task: asyncio.Task[str] | None = None
        self.listener = None

    def attach(self, listener) -> None:
        self.listener = listener

    def __call__(self, url: str) -> None:
        self.task = asyncio.get_running_loop().create_task(
            asyncio.to_thread(act_as_browser, url, self.action)
        )
        # A browser step that fails ends the wait at once instead of after the timeout.
        self.task.add_done_callback(
            lambda t: t.cancelled() or t.exception() is None or self.listener.cancel()
        )


async def _sign_in(sim, store=None, action="allow", http=None, **options):
    """Sign in with the headless browser; pass `http` to keep using the session afterwards."""
    if http is None:
        async with api_client() as own:
            return await _sign_in(sim, store, action, own, **options)
    browser = Browser(action)
    try:
        return await sign_in(
            http,
            profile_for(sim),
            store or MemorySecretStore(),
            browser,
            SignInOptions(timeout=30, **options),
            on_listener=browser.attach,
        )
    finally:
        if browser.task is not None:
            await asyncio.gather(browser.task, return_exceptions=True)


def test_sign_in_then_events_with_the_token_then_rotation_and_reuse_detection(simulator, caplog):
    caplog.set_level(logging.DEBUG)
    store = MemorySecretStore()
    simulator.emit(3)

    async def scenario():
        async with api_client() as http:
            browser = Browser()
            result = await sign_in(
                http,
                profile_for(simulator),
                store,
                browser,
                SignInOptions(timeout=30),
                on_listener=browser.attach,
            )
            await browser.task
            session = result.session
            token = await session.access_token()
            # The access token is what the event stream accepts (docs/event-stream.md "Request").
            async with http.stream(
                "GET",
                simulator.base_url + "/events",
                headers={"Authorization": f"Bearer {token}", "Accept": "text/event-stream"},
            ) as response:
                status = response.status_code
            first_rt = store.get(session.slot.key)
            await session.refresh()
            second_rt = store.get(session.slot.key)
            assert second_rt != first_rt
            with pytest.raises(TokenEndpointError) as reuse:
                await session.client.refresh(first_rt)
            with pytest.raises(SignInRequired, match="signed out of sim: sign in again"):
                await session.refresh()  # the family is revoked: the newest token is dead too
            return result, status, reuse.value, [first_rt, second_rt, token]

    result, status, reuse, secrets = asyncio.run(scenario())
    assert result.user.sub and result.user.display_name
    assert result.id_claims["iss"] == simulator.issuer  # with the trailing slash
    assert status == 200
    assert reuse.status == 403 and reuse.error == "invalid_grant"
    assert store.get(result.session.slot.key) is None
    for secret in secrets:
        assert secret not in caplog.text


def test_cancel_on_the_login_page_is_access_denied(simulator):
    with pytest.raises(SignInFailed) as info:
        asyncio.run(_sign_in(simulator, action="deny"))
    assert info.value.code == "access_denied"
    assert "cancelled or refused in the browser" in str(info.value)


@pytest.mark.parametrize(
    ("knobs", "text"),
    [
        ({"id_token_alg": "HS256"}, "signed with 'HS256'; only RS256 is accepted"),
        (
            {"id_token_issuer": "https://evil.example/"},
            "issuer 'https://evil.example/' is not the tenant's issuer",
        ),
        (
            {"id_token_audience": "someone-else"},
            "audience 'someone-else' does not include this app's client ID",
        ),
        ({"id_token_expired": True}, "expired"),
        ({"id_token_nonce": "replayed-nonce"}, "nonce does not match"),
        # Validly signed, but an `exp` of NaN never compares as past: it would never expire.
        ({"id_token_exp": "nan"}, "claim 'exp' holds a number that is not finite"),
        ({"id_token_exp": "inf"}, "claim 'exp' holds a number that is not finite"),
        ({"id_token_exp": "-inf"}, "claim 'exp' holds a number that is not finite"),
    ],
)
def test_bad_id_tokens_from_the_simulator_are_invalid_token(simulator, knobs, text):
    simulator.faults(**knobs)
    with pytest.raises(SignInFailed) as info:
        asyncio.run(_sign_in(simulator))
    assert info.value.code == "invalid_token"
    assert text in str(info.value)


def test_missing_issuer_slash_would_be_caught(simulator):
    """The simulator's issuer has Auth0's trailing slash; a token without it is a different issuer."""
    simulator.faults(id_token_issuer=simulator.auth_url)
    with pytest.raises(SignInFailed, match="is not the tenant's issuer"):
        asyncio.run(_sign_in(simulator))


def test_concurrent_refresh_spends_the_refresh_token_once(simulator):
    async def scenario():
        async with api_client() as http:
            result = await _sign_in(simulator, http=http)
            tokens = await asyncio.gather(*(result.session.refresh() for _ in range(6)))
            again = await result.session.refresh()
            return result.session, tokens, again

    session, tokens, again = asyncio.run(scenario())
    assert session.refreshes == 2 and len(set(tokens)) == 1 and again


def test_rotated_refresh_token_is_saved_before_the_access_token_is_used(simulator):
    order: list[str] = []

    class RecordingStore(MemorySecretStore):
        def set(self, tenant, secret):
            order.append("saved")
            super().set(tenant, secret)

    async def scenario():
        async with api_client() as http:
            result = await _sign_in(simulator, store=RecordingStore(), http=http)
            order.clear()
            token = await result.session.refresh()
            order.append("handed out")
            return token

    asyncio.run(scenario())
    assert order == ["saved", "handed out"]


@pytest.mark.dbus
def test_cli_login_then_stream_uses_that_sign_in(simulator, tmp_path):
    """`tenant-events login` against the simulator, then `tenant-events stream` with no token and no --tenant."""
    if not REAL_KEYRING:
        pytest.skip("needs the session keyring: run via ./run test tests/auth (TENANT_EVENTS_REAL_KEYRING=1)")
    data = str(tmp_path / "data")
    env = {**os.environ, "TENANT_EVENTS_LOG_JSON": "1"}
    env.pop("TENANT_EVENTS_ACCESS_TOKEN", None)
    login = cli_login(simulator.auth_url, simulator.demo_client_id, data, env=env)
    out, err = login.out, login.err
    assert login.returncode == 0, err
    assert "code=" in login.final
    assert "Signed in to 127-0-0-1-" in out
    name = out.strip().splitlines()[-1].split()[3]
    stored = stored_token(data, name)
    assert stored

    stream = subprocess.Popen(
        [sys.executable, "-m", "tenant_events", "stream", "--data-dir", data, "--jsonl", "-"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    timer = threading.Timer(60, stream.kill)
    timer.start()
    try:
        assert stream.stderr is not None and stream.stdout is not None
        lines = []
        for line in stream.stderr:
            lines.append(line)
            if "tenant-events: live" in line:
                break
        simulator.emit(5)
        events = [stream.stdout.readline() for _ in range(5)]
        stream.send_signal(signal.SIGINT)
        _, rest = stream.communicate(timeout=60)
    finally:
        timer.cancel()
        if stream.poll() is None:
            stream.kill()
    text = "".join(lines) + rest
    assert stream.returncode == 0, text
    assert all(e.strip() for e in events), text
    assert "5 events stored" in text, text
    assert stored not in text + "".join(events)
    forget_token(data, name)


@pytest.mark.expect_warning_logs
def test_keyring_that_fails_to_save_gives_session_only_sign_in_with_a_notice(simulator):
    """A locked or dismissed keyring (keyring#77, poetry#6640): sign-in still works, for this session, and says so."""
    from tenant_events.auth.secret_store import SecretStoreUnavailable

    class LockedStore(MemorySecretStore):
        persistent = True

        def set(self, tenant, secret):
            raise SecretStoreUnavailable(
                "the system keyring refused to save the sign-in: collection is locked"
            )

    async def scenario():
        async with api_client() as http:
            result = await _sign_in(simulator, store=LockedStore(), http=http)
            token = await result.session.refresh()  # the in-memory refresh token still works
            return result, token

    result, token = asyncio.run(scenario())
    assert token
    assert result.notice and "Sign-in will last only while the app runs" in result.notice
    assert "collection is locked" in result.notice
    assert not result.session.store.persistent


def test_cli_logout_with_browser_and_return_to(simulator, tmp_path):
    """`logout --browser --return-to URL`: revoke, forget, then send the browser to the tenant's logout page,
    which ends the session and redirects to returnTo. A non-loopback http:// returnTo is refused (exit 3)."""
    data = str(tmp_path / "data")
    env = {
        **os.environ,
        "TENANT_EVENTS_LOG_JSON": "1",
        "BROWSER": "true",
    }  # `true URL`: a browser that opens nothing
    login = cli_login(simulator.auth_url, simulator.demo_client_id, data, env=env)
    assert login.returncode == 0, login.err

    refused = subprocess.run(
        [
            sys.executable,
            "-m",
            "tenant_events",
            "logout",
            "--browser",
            "--return-to",
            "http://evil.example/",
            "--data-dir",
            data,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert refused.returncode == 3 and "--return-to" in refused.stderr and "http://" in refused.stderr

    back = "http://127.0.0.1:9/signed-out"
    logout = subprocess.run(
        [
            sys.executable,
            "-m",
            "tenant_events",
            "logout",
            "--browser",
            "--return-to",
            back,
            "--data-dir",
            data,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert logout.returncode == 0, logout.stderr
    url = logout.stdout.splitlines()[0]
    assert (
        url.startswith(simulator.auth_url + "/v2/logout?")
        and "returnTo=http%3A%2F%2F127.0.0.1%3A9%2Fsigned-out" in url
    )
    page = httpx.get(url, follow_redirects=False)
    assert page.status_code in (302, 303) and page.headers["location"] == back
