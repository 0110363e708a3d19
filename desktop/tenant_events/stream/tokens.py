"""The token provider seam between the stream engine and sign-in.

The engine asks for a bearer token before each connection and forces one refresh after a 401 (docs/event-stream.md
"Errors"). `auth/` implements the Protocol for browser sign-in; `StaticTokenProvider` serves the CLI's
`TENANT_EVENTS_ACCESS_TOKEN`, and `ClientCredentialsTokenProvider` (stream/client_credentials.py) service use.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from tenant_events.errors import SignInRequired


@runtime_checkable
class TokenProvider(Protocol):
    """Hands out access tokens; never logs them."""

    async def access_token(self) -> str:
        """A token that is valid now as far as the provider knows (may refresh silently first)."""
        ...

    async def refresh(self) -> str:
        """Force a new token after the server said 401; raises SignInRequired when sign-in is gone."""
        ...


class StaticTokenProvider:
    """One fixed token (e.g. from `TENANT_EVENTS_ACCESS_TOKEN`): a 401 cannot be fixed by refreshing."""

    def __init__(self, token: str) -> None:
        if not token.strip():
            raise SignInRequired(
                "the access token is empty", "set TENANT_EVENTS_ACCESS_TOKEN to a valid token"
            )
        self._token = token.strip()

    async def access_token(self) -> str:
        return self._token

    async def refresh(self) -> str:
        raise SignInRequired(
            "the tenant rejected the access token (401)",
            "get a new token and set TENANT_EVENTS_ACCESS_TOKEN again, or sign in: tenant-events login",
        )

    def __repr__(self) -> str:  # never show the token
        return "StaticTokenProvider(<token>)"
