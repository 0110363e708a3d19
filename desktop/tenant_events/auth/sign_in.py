"""One browser sign-in, start to finish (RFC 8252 native app flow, RFC 7636 PKCE, OIDC Core §3.1).

discovery → bind loopback listener → authorization URL (state, nonce, S256 challenge, audience) → `opener(url)`
(the CLI prints it, the GUI opens it and shows it with a copy button) → wait for the callback with our state →
RFC 9207 `iss` check → code exchange → ID token validation → userinfo → refresh token into the secret store.
The listener is closed in every path. Nothing here logs a token, a code or a verifier.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import httpx

from tenant_events.auth.discovery import JwksCache, ProviderMetadata, fetch_metadata
from tenant_events.auth.errors import SignInFailed, TokenEndpointError
from tenant_events.auth.id_token import DEFAULT_LEEWAY, IdTokenCheck, validate_id_token
from tenant_events.auth.loopback import DEFAULT_TIMEOUT, LoopbackListener
from tenant_events.auth.oauth_client import OAuthClient, UserInfo
from tenant_events.auth.pkce import AuthRequestSecrets
from tenant_events.auth.secret_store import SecretStore
from tenant_events.auth.session import AuthSession
from tenant_events.auth.stored_sign_in import SignInSlot, slot_for
from tenant_events.settings import TenantProfile

log = logging.getLogger(__name__)

Opener = Callable[[str], Awaitable[None] | None]


@dataclass(frozen=True)
class SignInOptions:
    """Knobs of one attempt; the defaults suit the real service."""

    timeout: float = DEFAULT_TIMEOUT
    leeway: int = DEFAULT_LEEWAY
    prompt: str | None = None
    max_age: int | None = None
    connection: str | None = None
    organization: str | None = None
    clock: Callable[[], float] = time.time
    extra_params: dict[str, str] = field(default_factory=dict)


@dataclass
class SignInResult:
    profile: TenantProfile
    user: UserInfo
    session: AuthSession
    id_claims: dict[str, Any]
    notice: str | None  # set when the sign-in lasts only this session


def authorization_url(
    meta: ProviderMetadata,
    profile: TenantProfile,
    redirect_uri: str,
    secrets: AuthRequestSecrets,
    options: SignInOptions,
) -> str:
    """The /authorize URL (Auth0's /authorize; RFC 7636 §4.3)."""
    params: dict[str, str] = {
        "response_type": "code",
        "client_id": profile.client_id,
        "redirect_uri": redirect_uri,
        "scope": profile.scope,
        "audience": profile.audience,
        "state": secrets.state,
        "nonce": secrets.nonce,
        "code_challenge": secrets.code_challenge,
        "code_challenge_method": "S256",
    }
    for name in ("prompt", "connection", "organization"):
        value = getattr(options, name)
        if value:
            params[name] = value
    if options.max_age is not None:
        params["max_age"] = str(options.max_age)
    params.update(options.extra_params)
    sep = "&" if "?" in meta.authorization_endpoint else "?"
    return meta.authorization_endpoint + sep + urlencode(params)


async def _userinfo(client: OAuthClient, access_token: str, claims: dict[str, Any]) -> UserInfo:
    """Userinfo for name and picture; fall back to the ID token's claims when the tenant refuses it."""
    try:
        return await client.userinfo(access_token)
    except (TokenEndpointError, SignInFailed) as exc:
        log.info("userinfo unavailable (%s); using the ID token's claims", getattr(exc, "code", exc))
        return UserInfo.model_validate(claims)


async def sign_in(
    http: httpx.AsyncClient,
    profile: TenantProfile,
    store: SecretStore,
    opener: Opener,
    options: SignInOptions | None = None,
    *,
    listener: LoopbackListener | None = None,
    on_listener: Callable[[LoopbackListener], None] | None = None,
    slot: SignInSlot | None = None,
) -> SignInResult:
    """Run one sign-in; raises SignInFailed (with `.code`) for every way it can fail. The refresh token goes to
    `slot` (default: the profile's, bound to its tenant and client, shared with no other process)."""
    options = options or SignInOptions()
    meta = await fetch_metadata(http, profile.auth_url)
    secrets = AuthRequestSecrets()
    listener = listener or LoopbackListener(profile.redirect_ports or (0,))
    try:
        redirect_uri = await listener.bind()
        if on_listener is not None:
            on_listener(listener)  # lets the GUI wire its Cancel button to listener.cancel()
        url = authorization_url(meta, profile, redirect_uri, secrets, options)
        log.info("sign-in to %s: waiting for the browser on %s", profile.name, redirect_uri)
        listener.expect(secrets.state)  # before the browser opens: its callback may beat wait()
        opened = opener(url)
        if inspect.isawaitable(opened):
            await opened
        callback = await listener.wait(secrets.state, options.timeout)
    finally:
        await listener.close()
    if callback.iss is not None and callback.iss.rstrip("/") != meta.issuer.rstrip("/"):
        # RFC 9207 §2.4: a response from another issuer is a mix-up attack.
        raise SignInFailed(
            "invalid_request", f"the sign-in response names issuer {callback.iss!r}, not {meta.issuer!r}"
        )
    client = OAuthClient(http, meta, profile.client_id)
    tokens = await client.exchange_code(callback.code, redirect_uri, secrets.code_verifier)
    if tokens.id_token is None:
        raise SignInFailed("invalid_token", "the tenant returned no ID token (is 'openid' in the scopes?)")
    check = IdTokenCheck(
        issuer=meta.issuer,
        client_id=profile.client_id,
        nonce=secrets.nonce,
        max_age=options.max_age,
        leeway=options.leeway,
        clock=options.clock,
    )
    claims = await validate_id_token(
        tokens.id_token.get_secret_value(), JwksCache(http, meta.jwks_uri), check
    )
    user = await _userinfo(client, tokens.access_token.get_secret_value(), claims)
    session = AuthSession(slot or slot_for(profile), client, store, tokens=tokens)
    if tokens.refresh_token is not None:
        await session.save_refresh_token(tokens.refresh_token.get_secret_value())
    else:
        session.notice = "The tenant issued no refresh token (is 'offline_access' allowed?): sign in again when it expires."
    notice = session.notice
    if notice is None and not session.store.persistent:
        notice = "Sign-in will last only while the app runs: no usable system keyring."
    log.info("signed in to %s as %s", profile.name, user.display_name)
    return SignInResult(profile=profile, user=user, session=session, id_claims=claims, notice=notice)


async def restore_session(
    http: httpx.AsyncClient, profile: TenantProfile, store: SecretStore, slot: SignInSlot | None = None
) -> AuthSession:
    """A session from the stored refresh token (no browser); the first `access_token()` refreshes.

    Only the slot bound to this profile's issuer, client ID and stream URL is read: a token made for the tenant
    the profile pointed at before is never sent to the one it points at now."""
    slot = slot or slot_for(profile)
    token = await asyncio.to_thread(store.get, slot.key)
    if not token:
        raise SignInFailed(
            "login_required",
            f"not signed in to {profile.name}",
            f"run: tenant-events login --tenant {profile.name}",
        )
    meta = await fetch_metadata(http, profile.auth_url)
    return AuthSession(slot, OAuthClient(http, meta, profile.client_id), store, refresh_token=token)


def logout_url(meta: ProviderMetadata, profile: TenantProfile, return_to: str | None = None) -> str:
    """Browser logout: OIDC RP-initiated logout when discovered, else Auth0's /v2/logout."""
    if meta.end_session_endpoint:
        params = {"client_id": profile.client_id}
        if return_to:
            params["post_logout_redirect_uri"] = return_to
        return meta.end_session_endpoint + "?" + urlencode(params)
    params = {"client_id": profile.client_id}
    if return_to:
        params["returnTo"] = return_to
    return profile.auth_url + "/v2/logout?" + urlencode(params)
