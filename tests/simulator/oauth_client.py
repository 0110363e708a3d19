"""Test-side OAuth helpers (PKCE pair, authorize URL, code exchange), written from RFC 7636/6749."""

from __future__ import annotations

import base64
import hashlib
import secrets
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx

SCOPE = "openid profile email offline_access read:events"


def pkce_pair() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(64)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def authorize_url(
    sim,
    *,
    redirect_uri="http://127.0.0.1:53999/callback",
    challenge=None,
    state="st-1",
    nonce="n-1",
    scope=SCOPE,
    client_id=None,
    **extra,
) -> str:
    params = {
        "response_type": "code",
        "client_id": client_id or sim.demo_client_id,
        "redirect_uri": redirect_uri,
        "scope": scope,
        "audience": sim.audience,
        "state": state,
        "nonce": nonce,
        "code_challenge": challenge or pkce_pair()[1],
        "code_challenge_method": "S256",
        **extra,
    }
    return f"{sim.auth_url}/authorize?{urlencode({k: v for k, v in params.items() if v is not None})}"


def query(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


def exchange(sim, code: str, verifier: str, redirect_uri="http://127.0.0.1:53999/callback") -> httpx.Response:
    return httpx.post(
        f"{sim.auth_url}/oauth/token",
        data={
            "grant_type": "authorization_code",
            "client_id": sim.demo_client_id,
            "code": code,
            "code_verifier": verifier,
            "redirect_uri": redirect_uri,
        },
    )


def refresh(sim, token: str, **extra) -> httpx.Response:
    return httpx.post(
        f"{sim.auth_url}/oauth/token",
        data={
            "grant_type": "refresh_token",
            "client_id": sim.demo_client_id,
            "refresh_token": token,
            **extra,
        },
    )
