"""End to end against the certified Node oidc-provider: the test acts as the browser, the app's real loopback
listener receives the redirect, the real token endpoint answers. Marked `node`."""

from __future__ import annotations

import asyncio
import logging
import time

import httpx
import pytest

from helpers.fixtures_auth import OidcPeer
from tenant_events.auth.discovery import JwksCache, fetch_metadata
from tenant_events.auth.errors import SignInFailed, TokenEndpointError
from tenant_events.auth.id_token import IdTokenCheck, validate_id_token
from tenant_events.auth.loopback import LoopbackListener
from tenant_events.auth.oauth_client import OAuthClient
from tenant_events.auth.pkce import AuthRequestSecrets
from tenant_events.auth.secret_store import MemorySecretStore
from tenant_events.auth.session import AuthSession
from tenant_events.auth.sign_in import SignInOptions, authorization_url, sign_in
from tenant_events.auth.stored_sign_in import slot_for
from tenant_events.errors import SignInRequired
from tenant_events.http import api_client
from tenant_events.settings import TenantProfile, make_profile

pytestmark = pytest.mark.node

CONSENT = SignInOptions(prompt="consent", timeout=30)  # the peer drops offline_access without consent


def profile_for(peer: OidcPeer, client_id: str | None = None, **extra: object) -> TenantProfile:
    return make_profile(auth_url=peer.auth_url, client_id=client_id or peer.client_id, name="peer", **extra)


class Browser:
    """An opener that hands the URL to the peer's headless browser in a thread and keeps the app's answer."""

    def __init__(self, peer: OidcPeer, action: str = "allow", before=None) -> None:
        self.peer, self.action, self.before = peer, action, before
        self.task: asyncio.Task[httpx.Response] | None = None
        self.url = ""

    def __call__(self, url: str) -> None:
        self.url = url

        def run() -> httpx.Response:
            if self.before:
                self.before(url)
            return self.peer.act_as_browser(url, self.action)

        self.task = asyncio.get_running_loop().create_task(asyncio.to_thread(run))

    async def page(self) -> httpx.Response:
        assert self.task is not None
        return await self.task


def test_sign_in_refresh_rotation_and_reuse_detection(oidc_peer, caplog, tmp_path):
    caplog.set_level(logging.DEBUG)
    store = MemorySecretStore()

    async def scenario():
        async with api_client() as http:
            browser = Browser(oidc_peer)
            profile = profile_for(oidc_peer)
            slot = slot_for(profile).key  # the slot the sign-in keeps its token in: bound to this tenant
            result = await sign_in(http, profile, store, browser, CONSENT)
            page = await browser.page()
            assert page.status_code == 200 and "Signed in" in page.text
            assert result.user.sub == "alice"
            assert result.id_claims["iss"] == oidc_peer.issuer
            first_rt = store.get(slot)
            assert first_rt, "the refresh token must be in the secret store"
            assert store.get("peer") is None, (
                "not under the profile name alone, where any tenant could read it"
            )
            first_at = await result.session.access_token()
            # The access token is accepted by the peer's resource server format: a JWT for our audience.
            assert first_at.count(".") == 2
            rotated_at = await result.session.refresh()
            second_rt = store.get(slot)
            assert second_rt and second_rt != first_rt, "rotation: a new refresh token is saved"
            assert rotated_at != first_at
            # Reuse of the old refresh token: the server revokes the whole grant.
            thief = AuthSession("peer", result.session.client, MemorySecretStore(), refresh_token=first_rt)
            with pytest.raises(SignInRequired, match="signed out of peer: sign in again"):
                await thief.refresh()
            with pytest.raises(SignInRequired, match="signed out of peer: sign in again"):
                await result.session.refresh()
            assert store.get(slot) is None, "a dead refresh token is removed from the store"
            return [first_rt, second_rt, first_at, rotated_at, result.id_claims]

    secrets = asyncio.run(scenario())
    logged = caplog.text + "".join(oidc_peer.output)
    for secret in secrets[:4]:
        assert secret not in logged
    assert "signed in to peer as" in caplog.text
    assert not any(tmp_path.rglob("*")), "nothing was written to disk"


def test_concurrent_refresh_is_single_flight(oidc_peer):
    store = MemorySecretStore()

    async def scenario():
        async with api_client() as http:
            result = await sign_in(http, profile_for(oidc_peer), store, Browser(oidc_peer), CONSENT)
            tokens = await asyncio.gather(*(result.session.refresh() for _ in range(5)))
            # One rotation for five callers; a second spend of the old token would have killed the grant.
            assert result.session.refreshes == 1
            assert len(set(tokens)) == 1
            assert await result.session.refresh()  # the grant is still alive

    asyncio.run(scenario())


def test_user_cancel_in_browser_is_access_denied(oidc_peer):
    async def scenario():
        async with api_client() as http:
            browser = Browser(oidc_peer, action="deny")
            with pytest.raises(SignInFailed) as info:
                await sign_in(http, profile_for(oidc_peer), MemorySecretStore(), browser, CONSENT)
            page = await browser.page()
            return info.value, page

    error, page = asyncio.run(scenario())
    assert error.code == "access_denied"
    assert "cancelled or refused in the browser" in str(error)
    assert "Sign-in failed" in page.text


def test_hs256_id_token_is_invalid_token(oidc_peer):
    async def scenario():
        async with api_client() as http:
            with pytest.raises(SignInFailed) as info:
                await sign_in(
                    http,
                    profile_for(oidc_peer, oidc_peer.hs256_client_id),
                    MemorySecretStore(),
                    Browser(oidc_peer),
                    CONSENT,
                )
            return info.value

    error = asyncio.run(scenario())
    assert error.code == "invalid_token"
    assert "signed with 'HS256'; only RS256 is accepted" in str(error)


def test_expired_id_token_is_rejected(oidc_peer):
    """The peer's real ID token, checked by a clock two hours ahead (beyond the 60 s leeway)."""
    options = SignInOptions(prompt="consent", timeout=30, clock=lambda: time.time() + 7200)

    async def scenario():
        async with api_client() as http:
            with pytest.raises(SignInFailed) as info:
                await sign_in(http, profile_for(oidc_peer), MemorySecretStore(), Browser(oidc_peer), options)
            return info.value

    error = asyncio.run(scenario())
    assert error.code == "invalid_token" and "expired" in str(error)


async def _authorize_by_hand(http, peer, profile):
    """The pieces of sign_in, kept apart so the test holds the code and the ID token."""
    meta = await fetch_metadata(http, profile.auth_url)
    secrets = AuthRequestSecrets()
    listener = LoopbackListener()
    redirect_uri = await listener.bind()
    # max_age makes the OP include auth_time (OIDC Core §3.1.2.1), which the max_age check below needs.
    url = authorization_url(
        meta, profile, redirect_uri, secrets, SignInOptions(prompt="consent", max_age=3600)
    )
    page = asyncio.create_task(asyncio.to_thread(peer.act_as_browser, url))
    callback = await listener.wait(secrets.state, 30)
    await page
    return meta, secrets, redirect_uri, callback


def test_wrong_verifier_reused_code_and_claim_checks(oidc_peer):
    async def scenario():
        async with api_client() as http:
            profile = profile_for(oidc_peer)
            meta, secrets, redirect_uri, callback = await _authorize_by_hand(http, oidc_peer, profile)
            client = OAuthClient(http, meta, profile.client_id)
            with pytest.raises(TokenEndpointError) as wrong_verifier:
                await client.exchange_code(callback.code, redirect_uri, AuthRequestSecrets().code_verifier)
            assert wrong_verifier.value.error == "invalid_grant"

            meta, secrets, redirect_uri, callback = await _authorize_by_hand(http, oidc_peer, profile)
            tokens = await client.exchange_code(callback.code, redirect_uri, secrets.code_verifier)
            with pytest.raises(TokenEndpointError) as reused:
                await client.exchange_code(callback.code, redirect_uri, secrets.code_verifier)
            assert reused.value.error == "invalid_grant"
            assert "invalid_grant" in str(reused.value)

            id_token = tokens.id_token.get_secret_value()
            keys = JwksCache(http, meta.jwks_uri)
            good = IdTokenCheck(issuer=meta.issuer, client_id=profile.client_id, nonce=secrets.nonce)
            claims = await validate_id_token(id_token, keys, good)
            assert claims["sub"] == "alice"
            failures = {}
            for name, check in {
                "nonce": IdTokenCheck(issuer=meta.issuer, client_id=profile.client_id, nonce="other-nonce"),
                "iss": IdTokenCheck(
                    issuer=meta.issuer + "/", client_id=profile.client_id, nonce=secrets.nonce
                ),
                "aud": IdTokenCheck(issuer=meta.issuer, client_id="someone-else", nonce=secrets.nonce),
                "max_age": IdTokenCheck(
                    issuer=meta.issuer,
                    client_id=profile.client_id,
                    nonce=secrets.nonce,
                    max_age=10,
                    clock=lambda: time.time() + 600,
                ),
            }.items():
                with pytest.raises(SignInFailed) as info:
                    await validate_id_token(id_token, keys, check)
                assert info.value.code == "invalid_token"
                failures[name] = str(info.value)
            return failures

    failures = asyncio.run(scenario())
    assert "nonce does not match" in failures["nonce"]
    assert "is not the tenant's issuer" in failures["iss"]
    assert "does not include this app's client ID 'someone-else'" in failures["aud"]
    assert "auth_time is older than max_age=10" in failures["max_age"]


@pytest.mark.expect_warning_logs
def test_stray_and_wrong_state_requests_do_not_break_the_sign_in(oidc_peer):
    answers: list[httpx.Response] = []

    def poke(url: str) -> None:
        redirect = httpx.QueryParams(url.split("?", 1)[1])["redirect_uri"]
        base = redirect.rsplit("/", 1)[0]
        answers.append(httpx.get(base + "/favicon.ico"))
        answers.append(httpx.get(redirect + "?code=attacker-code&state=forged"))

    async def scenario():
        async with api_client() as http:
            browser = Browser(oidc_peer, before=poke)
            result = await sign_in(http, profile_for(oidc_peer), MemorySecretStore(), browser, CONSENT)
            return result, await browser.page()

    result, page = asyncio.run(scenario())
    assert answers[0].status_code == 404
    assert answers[1].status_code == 400 and "State mismatch" in answers[1].text
    assert page.status_code == 200 and result.user.sub == "alice"
