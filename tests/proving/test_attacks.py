"""Attacks on sign-in and on the transport (proving ground, security), beyond the sign-in issue's rejection tests
(tests/auth/): a stolen code without its verifier, a forged callback from another origin, redirects to other
hosts, and TLS that is always verified — a self-signed server is refused and never sees a token.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import httpx
import pytest

from helpers.fixtures_engine import follow
from helpers.fixtures_proving import http_response, raw_server, self_signed_cert, tls_context
from simulator.oauth_client import authorize_url, exchange, pkce_pair, query
from tenant_events.auth.loopback import LoopbackListener
from tenant_events.stream.states import StreamState

TOKEN = "proving-token-7f3a9c"  # a marker searched for, not a credential


class _Target:
    """What `follow` needs from a simulator handle, pointed at a hostile server."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url

    def mint_token(self) -> str:
        return TOKEN


def test_a_stolen_code_without_the_verifier_buys_nothing(simulator):
    """RFC 7636 §1: an app that intercepts the redirect gets the code but not the verifier."""
    verifier, challenge = pkce_pair()
    redirect = "http://127.0.0.1:53999/callback"
    from helpers.browser import act_as_browser

    location = act_as_browser(authorize_url(simulator, challenge=challenge), deliver=False)
    code = query(location)["code"]
    token_url = f"{simulator.auth_url}/oauth/token"
    form = {
        "grant_type": "authorization_code",
        "client_id": simulator.demo_client_id,
        "code": code,
        "redirect_uri": redirect,
    }
    no_verifier = httpx.post(token_url, data=form)
    guessed = httpx.post(token_url, data={**form, "code_verifier": pkce_pair()[0]})
    plain = httpx.post(token_url, data={**form, "code_verifier": challenge})  # the challenge seen in the URL
    for reply in (no_verifier, guessed, plain):
        assert reply.status_code in (400, 401, 403), reply.text
        assert "access_token" not in reply.text
        assert reply.json()["error"] in ("invalid_request", "invalid_grant")
    assert exchange(simulator, code, verifier).status_code in (200, 403)  # the owner may still redeem it


@pytest.mark.expect_warning_logs
def test_a_forged_callback_from_another_origin_is_refused_and_the_real_one_still_lands():
    """A web page can make the browser hit 127.0.0.1 (CSRF / login fixation): without our state it fails."""

    async def scenario():
        async with LoopbackListener() as listener:
            waiter = asyncio.create_task(listener.wait("real-state", 10))
            await asyncio.sleep(0)
            headers = {"Origin": "https://evil.example", "Referer": "https://evil.example/x"}
            async with httpx.AsyncClient(timeout=5) as client:
                forged = await client.get(
                    listener.redirect_uri,
                    params={"code": "attacker-code", "state": "guessed"},
                    headers=headers,
                )
                posted = await client.post(
                    listener.redirect_uri, data={"code": "attacker-code", "state": "guessed"}, headers=headers
                )
                still_waiting = not waiter.done()
                real = await client.get(listener.redirect_uri, params={"code": "good", "state": "real-state"})
            return forged, posted, still_waiting, real, await waiter

    forged, posted, still_waiting, real, result = asyncio.run(scenario())
    assert forged.status_code == 400 and "State mismatch" in forged.text
    assert posted.status_code >= 400
    assert "attacker-code" not in forged.text  # nothing reflected back into the page
    assert still_waiting and real.status_code == 200
    assert result.code == "good"


def test_the_simulator_refuses_a_redirect_to_a_non_loopback_host(simulator):
    """The public demo client may only redirect to loopback (RFC 8252 §7.3); the code must not leave."""
    for target in (
        "http://evil.example/callback",
        "https://evil.example/callback",
        "http://127.0.0.1.evil.example/callback",
    ):
        page = httpx.get(authorize_url(simulator, redirect_uri=target), follow_redirects=False)
        assert page.status_code == 400, (target, page.status_code)
        assert "evil.example" not in page.headers.get("location", "")


def test_the_stream_never_follows_a_redirect_to_another_host(tmp_path):
    """A 307 from the events endpoint would hand the bearer token to whoever it names: never followed."""
    with raw_server("127.0.0.2", http_response("200 OK", {"Content-Type": "text/event-stream"})) as thief:
        moved = http_response("307 Temporary Redirect", {"Location": thief.url + "/api/v2/events"})
        with raw_server("127.0.0.1", moved) as origin:
            rec = follow(
                _Target(origin.url + "/api/v2"),
                tmp_path / "r.sqlite3",
                token=TOKEN,
                timeout=15,
                until=lambda r: len(r.states) >= 2 and r.states[-1].state is not StreamState.CONNECTING,
            )
    assert origin.requests and TOKEN.encode() in origin.requests[0]
    assert thief.requests == [], "the redirect was followed"
    ended = [s for s in rec.states if s.state in (StreamState.RECONNECTING, StreamState.ERROR)]
    assert ended and "307" in ended[0].message, [s.message for s in rec.states]


def test_sign_in_never_follows_a_discovery_redirect_to_another_host(tmp_path):
    with raw_server(
        "127.0.0.2", http_response("200 OK", {"Content-Type": "application/json"}, b"{}")
    ) as thief:
        moved = http_response("302 Found", {"Location": thief.url + "/.well-known/openid-configuration"})
        with raw_server("127.0.0.1", moved) as origin:
            proc = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "tenant_events",
                    "login",
                    "--no-browser",
                    "--auth-url",
                    origin.url,
                    "--client-id",
                    "abcdefghijklmnopqrstuvwxyzABCDEF",
                    "--data-dir",
                    str(tmp_path),
                ],
                capture_output=True,
                text=True,
                timeout=60,
            )
    assert proc.returncode != 0 and thief.requests == []
    assert origin.url in proc.stderr, proc.stderr


def test_tls_is_verified_even_on_loopback_and_a_self_signed_stream_never_sees_the_token(tmp_path):
    cert, key = self_signed_cert(tmp_path)
    ok = http_response("200 OK", {"Content-Type": "text/event-stream"})
    with raw_server("127.0.0.1", ok, tls_context(cert, key)) as evil:
        rec = follow(
            _Target(evil.url + "/api/v2"),
            tmp_path / "t.sqlite3",
            token=TOKEN,
            timeout=15,
            until=lambda r: any(s.state is not StreamState.CONNECTING for s in r.states),
        )
    assert evil.requests == [], "an HTTP request (with the bearer token) went over an unverified TLS session"
    refused = next(s for s in rec.states if s.state is not StreamState.CONNECTING)
    # Not a flaky network: retrying cannot fix it, so the engine stops and says what is wrong.
    assert refused.state is StreamState.ERROR, (refused.state, refused.message)
    assert "TLS certificate is not trusted (self-signed certificate)" in refused.message


def test_sign_in_to_a_self_signed_tenant_fails_with_a_clear_message(tmp_path):
    cert, key = self_signed_cert(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("SSL_CERT_FILE", "SSL_CERT_DIR")}
    with raw_server("127.0.0.1", http_response("200 OK", {}), tls_context(cert, key)) as evil:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "tenant_events",
                "login",
                "--no-browser",
                "--auth-url",
                evil.url,
                "--client-id",
                "abcdefghijklmnopqrstuvwxyzABCDEF",
                "--data-dir",
                str(tmp_path / "d"),
            ],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
    assert proc.returncode == 6, proc.stderr  # NetworkError (cli/main.py exit codes)
    line = proc.stderr.strip().splitlines()[-1]
    assert (
        f"refused to talk to {evil.url}: its TLS certificate is not trusted (self-signed certificate)" in line
    )
    assert "SSL_CERT_FILE" in line, line
    assert evil.requests == []


def discovery(issuer: str, override: dict[str, object]) -> bytes:
    doc = {
        "issuer": issuer,
        "authorization_endpoint": f"{issuer}/authorize",
        "token_endpoint": f"{issuer}/oauth/token",
        "jwks_uri": f"{issuer}/.well-known/jwks.json",
        "response_types_supported": ["code"],
        "code_challenge_methods_supported": ["S256"],
    } | override
    return http_response("200 OK", {"Content-Type": "application/json"}, json.dumps(doc).encode())


@pytest.mark.parametrize(
    ("override", "said"),
    [
        ({"issuer": "https://evil.example/"}, "names issuer 'https://evil.example/'"),
        ({"token_endpoint": "http://evil.example/oauth/token"}, "discovery field token_endpoint"),
        ({"authorization_endpoint": "javascript:alert(1)"}, "discovery field authorization_endpoint"),
        ({"code_challenge_methods_supported": ["plain"]}, "does not support PKCE S256"),
    ],
)
def test_a_hostile_discovery_document_is_refused_before_anything_is_sent(tmp_path, override, said):
    with raw_server("127.0.0.1", b"") as origin:
        origin.response = discovery(origin.url, override)
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "tenant_events",
                "login",
                "--no-browser",
                "--auth-url",
                origin.url,
                "--client-id",
                "abcdefghijklmnopqrstuvwxyzABCDEF",
                "--data-dir",
                str(tmp_path),
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert proc.returncode != 0 and not proc.stdout.startswith("http"), "an authorization URL was printed"
    assert said in proc.stderr, proc.stderr
    assert len(origin.requests) == 1 and b"/.well-known/openid-configuration" in origin.requests[0]
