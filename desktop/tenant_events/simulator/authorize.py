"""Browser-facing OAuth endpoints: discovery, JWKS, /authorize, the login decision, /v2/logout.

Shaped like Auth0's: issuer with a trailing slash, code flow only, PKCE S256 required,
`state` and `nonce` echoed, `prompt` (`none` needs a session, `login` forces the page), `audience`.
Errors before the redirect URI is trusted (unknown client, redirect mismatch) are shown as a page, never
redirected (RFC 6749 §4.1.2.1); later ones go back to the client as `error=...&state=...`.
"""

from __future__ import annotations

import secrets
import time
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response

from tenant_events.simulator import keys
from tenant_events.simulator.clients import READ_EVENTS
from tenant_events.simulator.config import TENANT
from tenant_events.simulator.grants import AuthRequest, CodeRecord, Grant
from tenant_events.simulator.login_page import error_page, form_post_page, login_page
from tenant_events.simulator.request_body import read_params
from tenant_events.simulator.state import SimState
from tenant_events.simulator.tokens import DEMO_USER

SESSION_COOKIE = "sim_session"
OIDC_SCOPES = ("openid", "profile", "email", "offline_access")


def discovery(state: SimState) -> JSONResponse:
    base = state.auth_url
    return JSONResponse(
        {
            "issuer": base + "/",
            "authorization_endpoint": base + "/authorize",
            "token_endpoint": base + "/oauth/token",
            "userinfo_endpoint": base + "/userinfo",
            "jwks_uri": base + "/.well-known/jwks.json",
            "revocation_endpoint": base + "/oauth/revoke",
            "scopes_supported": [*OIDC_SCOPES, READ_EVENTS],
            "response_types_supported": ["code"],
            "response_modes_supported": ["query", "form_post"],
            "code_challenge_methods_supported": ["S256"],
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
            "claims_supported": [
                "aud",
                "auth_time",
                "email",
                "email_verified",
                "exp",
                "iat",
                "iss",
                "name",
                "nickname",
                "nonce",
                "picture",
                "sub",
            ],
        }
    )


def jwks(state: SimState) -> JSONResponse:
    return JSONResponse(keys.jwks(state.key))


def _bad_page(title: str, detail: str) -> HTMLResponse:
    return HTMLResponse(error_page(title, detail), status_code=400)


def _to_client(redirect_uri: str, mode: str, params: dict[str, str | None]) -> Response:
    clean = {k: v for k, v in params.items() if v is not None}
    if mode == "form_post":
        return HTMLResponse(form_post_page(redirect_uri, clean))
    return RedirectResponse(f"{redirect_uri}?{urlencode(clean)}", status_code=302)


async def authorize(request: Request) -> Response:
    state: SimState = request.app.state.sim
    q = request.query_params
    client = state.clients.get(q.get("client_id"))
    if client is None:
        return _bad_page(
            "Unknown client", f"client_id {q.get('client_id')!r} is not registered on this tenant."
        )
    redirect_uri = q.get("redirect_uri", "")
    if "authorization_code" not in client.grant_types:
        return _bad_page(
            "Unauthorized client", f"{client.client_id} may not use the authorization code flow."
        )
    if not client.redirect_allowed(redirect_uri):
        return _bad_page(
            "Callback URL mismatch",
            f"{redirect_uri!r} is not in the list of allowed callback URLs of {client.client_id}.",
        )
    mode = q.get("response_mode", "query")
    if mode not in ("query", "form_post"):
        mode = "query"
    st = q.get("state")

    def fail(error: str, description: str) -> Response:
        return _to_client(redirect_uri, mode, {"error": error, "error_description": description, "state": st})

    if q.get("response_type") != "code":
        return fail(
            "unsupported_response_type", f"Unsupported response type: {q.get('response_type')!r}; use code."
        )
    if not q.get("code_challenge"):
        return fail("invalid_request", "code_challenge is required (PKCE).")
    if q.get("code_challenge_method") != "S256":
        return fail(
            "invalid_request",
            f"code_challenge_method {q.get('code_challenge_method')!r} is not supported; use S256.",
        )
    audience = q.get("audience")
    if audience is not None and audience != state.base_url + "/":
        return fail("access_denied", f"Service not found: {audience}")
    req = AuthRequest(
        client.client_id,
        redirect_uri,
        st,
        q.get("nonce"),
        (q.get("scope") or "openid").split(),
        audience,
        q["code_challenge"],
        mode,
    )
    prompt = (q.get("prompt") or "").split()
    session = state.auth.sessions.get(request.cookies.get(SESSION_COOKIE, ""))
    if "none" in prompt:
        if session is None:
            return fail("login_required", "Login required")
        return _issue_code(state, req, session)
    txn = state.auth.new_txn(req)
    return HTMLResponse(login_page(txn, client.name, TENANT, req.scope))


def _issue_code(state: SimState, req: AuthRequest, auth_time: int) -> Response:
    client = state.clients.get(req.client_id)
    assert client is not None
    granted = [s for s in req.scope if s in OIDC_SCOPES or (s in client.api_scopes and req.audience)]
    grant = Grant(req.client_id, DEMO_USER["sub"], granted, req.audience, auth_time, req.nonce)
    record = CodeRecord(grant, req.redirect_uri, req.code_challenge, time.time() + state.config.code_ttl)
    code = state.auth.new_code(record)
    return _to_client(req.redirect_uri, req.response_mode, {"code": code, "state": req.state})


async def decision(request: Request) -> Response:
    state: SimState = request.app.state.sim
    form = await read_params(request)
    txn = str(form.get("txn", ""))
    req = state.auth.txns.pop(txn, None)
    if req is None:
        return _bad_page(
            "Login expired", "This login page has expired or was already used; start again from the app."
        )
    action = str(form.get("action", ""))
    if action == "deny":
        return _to_client(
            req.redirect_uri,
            req.response_mode,
            {
                "error": "access_denied",
                "error_description": "User did not authorize the request",
                "state": req.state,
            },
        )
    if action != "allow":
        return _bad_page("Bad request", f"Unknown action {action!r}; expected allow or deny.")
    auth_time = int(time.time())
    response = _issue_code(state, req, auth_time)
    session = secrets.token_urlsafe(24)
    state.auth.sessions[session] = auth_time
    response.set_cookie(SESSION_COOKIE, session, httponly=True, samesite="lax")
    return response


async def logout(request: Request) -> Response:
    """Auth0 /v2/logout: end the session; returnTo must be allowed for the client."""
    state: SimState = request.app.state.sim
    state.auth.sessions.pop(request.cookies.get(SESSION_COOKIE, ""), None)
    return_to = request.query_params.get("returnTo")
    client_id = request.query_params.get("client_id")
    if return_to is None:
        response: Response = PlainTextResponse("OK")
    else:
        candidates = [state.clients.get(client_id)] if client_id else list(state.clients.clients.values())
        if not any(c is not None and c.logout_allowed(return_to) for c in candidates):
            return _bad_page("Invalid returnTo", f"{return_to!r} is not in the allowed logout URLs.")
        response = RedirectResponse(return_to, status_code=302)
    response.delete_cookie(SESSION_COOKIE)
    return response
