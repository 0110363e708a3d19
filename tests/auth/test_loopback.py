"""The RFC 8252 loopback listener over real sockets: binding, stray requests, state, once-only, timeout,
cancel, port in use, escaping, and no connection from a non-loopback address."""

from __future__ import annotations

import asyncio
import socket

import httpx
import pytest

from tenant_events.auth.errors import SignInFailed
from tenant_events.auth.loopback import LoopbackListener


async def get(url: str) -> httpx.Response:
    async with httpx.AsyncClient(timeout=5) as client:
        return await client.get(url)


def run(coro):
    return asyncio.run(coro)


def test_binds_127_0_0_1_first_then_builds_the_redirect_uri():
    async def scenario():
        listener = LoopbackListener()
        uri = await listener.bind()
        try:
            assert uri == f"http://127.0.0.1:{listener.port}/callback"
            assert listener.port > 0
            # The port is really ours before the URL exists: another bind to it fails.
            probe = socket.socket()
            with pytest.raises(OSError):
                probe.bind(("127.0.0.1", listener.port))
            probe.close()
        finally:
            await listener.close()

    run(scenario())


@pytest.mark.expect_warning_logs
def test_matching_callback_ends_the_wait_once_and_strays_get_404():
    async def scenario():
        async with LoopbackListener() as listener:
            waiter = asyncio.create_task(listener.wait("s1", 10))
            await asyncio.sleep(0)
            favicon = await get(f"http://127.0.0.1:{listener.port}/favicon.ico")
            no_state = await get(listener.redirect_uri + "?code=abc")
            assert not waiter.done()
            ok = await get(listener.redirect_uri + "?code=the-code&state=s1&iss=http%3A%2F%2Fop")
            result = await waiter
            return favicon, no_state, ok, result, listener

    favicon, no_state, ok, result, listener = run(scenario())
    assert favicon.status_code == 404 and "only receives sign-in responses" in favicon.text
    assert no_state.status_code == 400 and "State mismatch" in no_state.text
    assert ok.status_code == 200 and "Signed in" in ok.text and "go back to Tenant Events" in ok.text
    assert ok.headers["cache-control"] == "no-store"
    assert result.code == "the-code" and result.iss == "http://op"
    assert "the-code" not in repr(result)
    assert listener.stray_requests == 1 and listener.rejected_state == 1


def test_listener_is_closed_after_the_callback():
    async def scenario():
        async with LoopbackListener() as listener:
            waiter = asyncio.create_task(listener.wait("s", 10))
            await asyncio.sleep(0)
            await get(listener.redirect_uri + "?code=c&state=s")
            await waiter
            with pytest.raises(httpx.ConnectError):
                await get(listener.redirect_uri + "?code=c&state=s")  # a duplicate callback finds nobody

    run(scenario())


def test_error_redirect_maps_to_a_message_and_escapes_html():
    async def scenario():
        async with LoopbackListener() as listener:
            waiter = asyncio.create_task(listener.wait("s", 10))
            await asyncio.sleep(0)
            page = await get(
                listener.redirect_uri
                + "?error=access_denied&state=s&error_description=%3Cscript%3Ealert(1)%3C%2Fscript%3E"
            )
            with pytest.raises(SignInFailed) as info:
                await waiter
            return page, info.value

    page, error = run(scenario())
    assert error.code == "access_denied"
    assert "cancelled or refused in the browser" in str(error)
    assert "<script>" not in page.text and "&lt;script&gt;" in page.text


@pytest.mark.expect_warning_logs
def test_timeout_is_a_clear_error_that_mentions_rejected_responses():
    async def scenario():
        async with LoopbackListener() as listener:
            # the browser's wrong answer comes first and is rejected (on a loaded machine it could otherwise come
            # after the half second, to a port already closed); then the wait runs out
            listener.expect("right")
            rejected = await get(listener.redirect_uri + "?code=c&state=wrong")
            assert rejected.status_code == 400
            with pytest.raises(SignInFailed) as info:
                await listener.wait("right", 0.5)
            return info.value

    error = run(scenario())
    assert error.code == "timeout"
    assert "no sign-in response arrived within 0.5 s" in str(error)
    assert "1 response(s) with a wrong state were rejected" in str(error)


def test_cancel_ends_the_wait_and_closes_the_port():
    async def scenario():
        listener = LoopbackListener()
        await listener.bind()
        port = listener.port
        asyncio.get_running_loop().call_later(0.1, listener.cancel)
        with pytest.raises(SignInFailed) as info:
            await listener.wait("s", 10)
        again = socket.socket()
        again.bind(("127.0.0.1", port))  # free again
        again.close()
        return info.value

    error = run(scenario())
    assert error.code == "cancelled" and "cancelled" in str(error)


def test_fixed_ports_are_tried_in_order_and_all_busy_is_port_in_use():
    busy = [socket.socket(), socket.socket()]
    for s in busy:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
    ports = [s.getsockname()[1] for s in busy]

    async def scenario():
        with pytest.raises(SignInFailed) as info:
            await LoopbackListener(ports).bind()
        free = socket.socket()
        free.bind(("127.0.0.1", 0))
        free_port = free.getsockname()[1]
        free.close()
        listener = LoopbackListener([*ports, free_port])
        uri = await listener.bind()
        await listener.close()
        return info.value, uri, free_port

    try:
        error, uri, free_port = run(scenario())
    finally:
        for s in busy:
            s.close()
    assert error.code == "port_in_use"
    assert f"ports {ports[0]}, {ports[1]} on 127.0.0.1 are all in use" in str(error)
    assert uri == f"http://127.0.0.1:{free_port}/callback"


def _non_loopback_address() -> str | None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # no packet is sent for UDP connect
            address = s.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") else address


def test_no_connection_is_accepted_on_a_non_loopback_address():
    address = _non_loopback_address()
    if address is None:
        pytest.skip("this machine has no non-loopback IPv4 address to try")

    async def scenario():
        async with LoopbackListener() as listener:
            with pytest.raises(OSError):
                _reader, writer = await asyncio.wait_for(asyncio.open_connection(address, listener.port), 3)
                writer.close()
            # and the loopback side still works
            waiter = asyncio.create_task(listener.wait("s", 5))
            await asyncio.sleep(0)
            await get(listener.redirect_uri + "?code=c&state=s")
            return await waiter

    assert run(scenario()).code == "c"


def test_refuses_a_non_loopback_host():
    with pytest.raises(ValueError, match="not a loopback address"):
        LoopbackListener(host="0.0.0.0")


def test_a_callback_that_beats_wait_is_still_accepted():
    # An opener that blocks until the page has loaded delivers the callback before wait() runs (the desktop
    # engineer hit this: it used to get 409 "already handled" and the sign-in hung until the timeout).
    async def scenario():
        async with LoopbackListener() as listener:
            listener.expect("early")
            early = await get(listener.redirect_uri + "?code=fast&state=early")
            result = await listener.wait("early", 5)
            return early, result

    early, result = run(scenario())
    assert early.status_code == 200 and "Signed in" in early.text
    assert result.code == "fast"


def test_sign_in_with_an_opener_that_completes_the_redirect_itself(simulator):
    # End to end: the opener is awaited and finishes the whole redirect (the callback included) before wait().
    from helpers.browser import act_as_browser
    from tenant_events import http
    from tenant_events.auth.secret_store import MemorySecretStore
    from tenant_events.auth.sign_in import sign_in
    from tenant_events.settings import make_profile

    profile = make_profile(name="fast", auth_url=simulator.auth_url, client_id=simulator.demo_client_id)

    async def scenario():
        async with http.api_client() as client:
            return await sign_in(
                client,
                profile,
                MemorySecretStore(),
                opener=lambda url: asyncio.to_thread(act_as_browser, url),
            )

    result = run(scenario())
    assert result.id_claims["sub"] and result.user.sub == result.id_claims["sub"]
