"""A TokenProvider for service use: OAuth 2.0 client credentials (RFC 6749 §4.4) against `{auth_url}/oauth/token`.

The secret comes from the environment (`TENANT_EVENTS_CLIENT_SECRET`), never argv, and is never logged.
The stream accepts a client credentials token carrying `read:events`.
"""

from __future__ import annotations

import asyncio
import time

from tenant_events.errors import NetworkError, SignInRequired
from tenant_events.http import TransportError, api_client
from tenant_events.server_text import shown
from tenant_events.stream.backoff import bounded

EXPIRY_MARGIN = 30.0


class ClientCredentialsTokenProvider:
    """Fetches and caches a token; `refresh()` always asks again."""

    def __init__(self, auth_url: str, client_id: str, client_secret: str, audience: str) -> None:
        if not client_id:
            raise SignInRequired("--client-id is empty", "pass the service application's client ID")
        if not client_secret:
            raise SignInRequired(
                "TENANT_EVENTS_CLIENT_SECRET is not set",
                "export the client secret of --client-id in the environment",
            )
        self._token_url = auth_url.rstrip("/") + "/oauth/token"
        self._form = {
            "grant_type": "client_credentials",
            "client_id": client_id,
            "client_secret": client_secret,
            "audience": audience,
        }
        self._token: str | None = None
        self._expires_at = 0.0
        self._lock = asyncio.Lock()

    def __repr__(self) -> str:
        return f"ClientCredentialsTokenProvider({self._form['client_id']!r})"

    async def access_token(self) -> str:
        if self._token and time.time() < self._expires_at - EXPIRY_MARGIN:
            return self._token
        return await self.refresh()

    async def refresh(self) -> str:
        async with self._lock:
            try:
                async with api_client() as client:
                    response = await client.post(self._token_url, data=self._form)
            except TransportError as exc:
                raise NetworkError(f"cannot reach {self._token_url}: {type(exc).__name__}") from exc
            try:
                body = response.json()
            except ValueError:
                body = {}
            if not isinstance(body, dict):
                body = {}
            if response.status_code != 200 or not isinstance(body.get("access_token"), str):
                detail = shown(
                    body.get("error_description") or body.get("error") or f"HTTP {response.status_code}"
                )
                raise SignInRequired(
                    f"the tenant refused the client credentials of {self._form['client_id']!r}: {detail}",
                    "check --client-id and TENANT_EVENTS_CLIENT_SECRET",
                )
            self._token = str(body["access_token"])
            # A lifetime that is not a sane number (NaN, inf, negative, text) counts as five minutes.
            lifetime = body.get("expires_in", 300)
            lifetime = bounded(
                lifetime if isinstance(lifetime, int | float) else 300, default=300.0, low=0.0, high=86400.0
            )
            self._expires_at = time.time() + lifetime
            return self._token
