"""Back-channel OAuth endpoints: /oauth/token, /oauth/revoke, /userinfo, shaped like Auth0's.

Errors are JSON `{error, error_description}` with the real service's statuses: 403 `invalid_grant` for a
bad, used or expired code and for an unknown or reused refresh token; 401 for a bad client secret.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from tenant_events.simulator.grants import Grant
from tenant_events.simulator.request_body import read_params
from tenant_events.simulator.state import SimState
from tenant_events.simulator.tokens import DEMO_USER, TokenRejected


def _error(status: int, error: str, description: str) -> JSONResponse:
    return JSONResponse({"error": error, "error_description": description}, status_code=status)


def _basic_auth(request: Request, params: dict[str, str]) -> None:
    """client_secret_basic → the same params as client_secret_post."""
    header = request.headers.get("authorization", "")
    if header.lower().startswith("basic "):
        try:
            user, _, secret = base64.b64decode(header[6:]).decode().partition(":")
        except ValueError:
            return
        params.setdefault("client_id", user)
        params.setdefault("client_secret", secret)


def _pkce_ok(verifier: str, challenge: str) -> bool:
    digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii", "replace")).digest())
    return hmac.compare_digest(digest.rstrip(b"=").decode(), challenge)  # RFC 7636 §4.6


def _token_reply(state: SimState, grant: Grant, *, refresh: str | None, with_id_token: bool) -> JSONResponse:
    tokens, ttl = state.token_service, state.config.token_ttl
    openid = "openid" in grant.scope
    # No `audience`: a token only for /userinfo, as Auth0 issues.
    aud = None if grant.audience else tokens.userinfo_audience
    access = tokens.mint_access(
        client_id=grant.client_id,
        sub=grant.sub,
        scope=" ".join(grant.scope),
        ttl=ttl,
        openid=openid,
        audience=aud,
    )
    body: dict[str, Any] = {
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": ttl,
        "scope": " ".join(grant.scope),
    }
    if openid and with_id_token:
        body["id_token"] = tokens.mint_id_token(
            client_id=grant.client_id, nonce=grant.nonce, auth_time=grant.auth_time
        )
    if refresh is not None:
        body["refresh_token"] = refresh
    return JSONResponse(body, headers={"Cache-Control": "no-store", "Pragma": "no-cache"})


async def token(request: Request) -> Response:
    state: SimState = request.app.state.sim
    params = await read_params(request)
    _basic_auth(request, params)
    grant_type = params.get("grant_type", "")
    client = state.clients.get(params.get("client_id"))
    if client is None:
        return _error(401, "access_denied", f"Unknown client: {params.get('client_id')!r}")
    if client.secret is not None and not hmac.compare_digest(params.get("client_secret", ""), client.secret):
        return _error(401, "access_denied", "Unauthorized: wrong or missing client_secret")
    if grant_type not in client.grant_types:
        if grant_type not in ("authorization_code", "refresh_token", "client_credentials"):
            return _error(400, "unsupported_grant_type", f"Unsupported grant type: {grant_type!r}")
        return _error(403, "unauthorized_client", f"Grant type {grant_type!r} not allowed for the client.")
    if grant_type == "authorization_code":
        return _authorization_code(state, params)
    if grant_type == "refresh_token":
        return _refresh(state, params)
    return _client_credentials(state, params, client.client_id, client.api_scopes)


def _authorization_code(state: SimState, params: dict[str, str]) -> Response:
    for name in ("code", "code_verifier", "redirect_uri"):
        if not params.get(name):
            return _error(400, "invalid_request", f"Missing required parameter: {name}")
    record = state.auth.codes.get(params["code"])
    if record is None or record.grant.client_id != params["client_id"]:
        return _error(403, "invalid_grant", "Invalid authorization code")
    if record.used:  # RFC 6749 §4.1.2: a replayed code revokes what it produced
        if record.family:
            state.auth.revoke_family(record.family)
        return _error(403, "invalid_grant", "Invalid authorization code")
    record.used = True
    if time.time() > record.expires:
        return _error(403, "invalid_grant", "Invalid authorization code (expired)")
    if params["redirect_uri"] != record.redirect_uri:
        return _error(
            403, "invalid_grant", "Invalid request: redirect_uri does not match the authorization request"
        )
    if not _pkce_ok(params["code_verifier"], record.code_challenge):
        return _error(403, "invalid_grant", "Failed to verify code verifier")
    refresh = None
    if "offline_access" in record.grant.scope:
        refresh, record.family = state.auth.issue_refresh(record.grant)
    return _token_reply(state, record.grant, refresh=refresh, with_id_token=True)


def _refresh(state: SimState, params: dict[str, str]) -> Response:
    if not params.get("refresh_token"):
        return _error(400, "invalid_request", "Missing required parameter: refresh_token")
    result = state.auth.use_refresh(params["refresh_token"], params["client_id"])
    if isinstance(result, str):
        return _error(403, "invalid_grant", result)
    grant, family = result
    if params.get("scope"):  # a smaller scope is allowed (as Auth0 allows on refresh)
        wanted = params["scope"].split()
        extra = [s for s in wanted if s not in grant.scope]
        if extra:
            state.auth.revoke_family(family)
            return _error(403, "invalid_scope", f"Scope(s) not granted before: {' '.join(extra)}")
        grant = Grant(grant.client_id, grant.sub, wanted, grant.audience, grant.auth_time, grant.nonce)
    new_refresh, _ = state.auth.issue_refresh(grant, family)
    return _token_reply(state, grant, refresh=new_refresh, with_id_token=True)


def _client_credentials(
    state: SimState, params: dict[str, str], client_id: str, api_scopes: tuple[str, ...]
) -> Response:
    audience = params.get("audience", "")
    if audience != state.base_url + "/":
        return _error(403, "access_denied", f"Service not enabled within domain: {audience}")
    wanted = params.get("scope", "").split() or list(api_scopes)
    refused = [s for s in wanted if s not in api_scopes]
    if refused:
        return _error(403, "access_denied", f"Client has not been granted scopes: {' '.join(refused)}")
    ttl = state.config.token_ttl
    access = state.token_service.mint_access(
        client_id=client_id,
        sub=f"{client_id}@clients",
        scope=" ".join(wanted),
        ttl=ttl,
        grant_type="client_credentials",
    )
    return JSONResponse(
        {"access_token": access, "token_type": "Bearer", "expires_in": ttl, "scope": " ".join(wanted)},
        headers={"Cache-Control": "no-store"},
    )


async def revoke(request: Request) -> Response:
    """RFC 7009 / Auth0: 200 even for an unknown token; revoking kills the token's whole family."""
    state: SimState = request.app.state.sim
    params = await read_params(request)
    _basic_auth(request, params)
    client = state.clients.get(params.get("client_id"))
    if client is None:
        return _error(401, "access_denied", f"Unknown client: {params.get('client_id')!r}")
    if client.secret is not None and not hmac.compare_digest(params.get("client_secret", ""), client.secret):
        return _error(401, "access_denied", "Unauthorized: wrong or missing client_secret")
    if not params.get("token"):
        return _error(400, "invalid_request", "Missing required parameter: token")
    state.auth.revoke(params["token"], client.client_id)
    return Response(status_code=200)


async def userinfo(request: Request) -> Response:
    state: SimState = request.app.state.sim
    scheme, _, bearer = request.headers.get("authorization", "").partition(" ")
    challenge = {"WWW-Authenticate": 'Bearer error="invalid_token"'}
    if scheme.lower() != "bearer" or not bearer:
        return JSONResponse(
            {"error": "invalid_token", "error_description": "Missing bearer token"}, 401, challenge
        )
    tokens = state.token_service
    try:
        claims = tokens.decode(bearer.strip())
    except TokenRejected as exc:
        return JSONResponse({"error": "invalid_token", "error_description": exc.message}, 401, challenge)
    aud = claims.get("aud")
    auds = aud if isinstance(aud, list) else [aud]
    if tokens.userinfo_audience not in auds or float(claims.get("exp", 0)) <= time.time():
        return JSONResponse(
            {"error": "invalid_token", "error_description": "Token not valid for /userinfo"}, 401, challenge
        )
    if claims.get("sub") != DEMO_USER["sub"]:
        return JSONResponse(
            {"error": "invalid_token", "error_description": "Not a user token"}, 401, challenge
        )
    return JSONResponse({**DEMO_USER, "updated_at": "2026-01-01T00:00:00.000Z"})
