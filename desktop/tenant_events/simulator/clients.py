"""The simulator's registered OAuth clients (applications), shaped like an Auth0 tenant's.

- `tenant-events-demo`: public native app (PKCE, no secret); RFC 8252 §7.3 any-port loopback redirects to
  `/callback` on 127.0.0.1, [::1] or localhost.
- `tenant-events-exact`: the same, but matched exactly, port included, as Auth0 does.
- `tenant-events-service`: confidential, client_credentials, global, may read events.
- `tenant-events-nonglobal`: client_credentials, not global → 401 "Client is not global." (docs/event-stream.md "Errors").
- `tenant-events-noscope`: client_credentials, global, no `read:events` → 403 insufficient scope.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from tenant_events.simulator.storage import SimStore

DEMO_CLIENT_ID = "tenant-events-demo"
EXACT_CLIENT_ID = "tenant-events-exact"
SERVICE_CLIENT_ID = "tenant-events-service"
NONGLOBAL_CLIENT_ID = "tenant-events-nonglobal"
NOSCOPE_CLIENT_ID = "tenant-events-noscope"
EXACT_PORTS = (8719, 8720, 8721)
LOOPBACK_HOSTS = ("127.0.0.1", "[::1]", "localhost")
READ_EVENTS = "read:events"


@dataclass(frozen=True)
class Client:
    client_id: str
    name: str
    secret: str | None = None
    grant_types: frozenset[str] = frozenset()
    is_global: bool = True
    api_scopes: tuple[str, ...] = ()  # scopes granted to this client on the events API
    redirect_uris: tuple[str, ...] = ()
    loopback_any_port: bool = False
    logout_urls: tuple[str, ...] = field(default=())

    def redirect_allowed(self, uri: str) -> bool:
        """Exact match, or RFC 8252 §7.3: a loopback redirect may use any port, the rest must match."""
        if uri in self.redirect_uris:
            return True
        if not self.loopback_any_port:
            return False
        try:
            parts = urlsplit(uri)
            port = parts.port
        except ValueError:
            return False
        if parts.scheme != "http" or port is None or parts.query or parts.fragment:
            return False
        host = parts.netloc.rsplit(":", 1)[0]
        return host in LOOPBACK_HOSTS and f"http://{host}{parts.path}" in self.redirect_uris

    def logout_allowed(self, url: str) -> bool:
        return url in self.logout_urls or self.redirect_allowed(url) or self._loopback_root(url)

    def _loopback_root(self, url: str) -> bool:
        try:
            parts = urlsplit(url)
            return (
                self.loopback_any_port
                and parts.scheme == "http"
                and parts.hostname in ("127.0.0.1", "::1", "localhost")
            )
        except ValueError:
            return False


class ClientRegistry:
    """The five clients; secrets are random per data dir and persisted with it."""

    def __init__(self, store: SimStore) -> None:
        def secret(client_id: str) -> str:
            value = store.get(f"secret:{client_id}")
            if value is None:
                value = secrets.token_urlsafe(32)
                store.put(f"secret:{client_id}", value)
            return value

        native = frozenset({"authorization_code", "refresh_token"})
        cc = frozenset({"client_credentials"})
        self.clients = {
            c.client_id: c
            for c in (
                Client(
                    DEMO_CLIENT_ID,
                    "Tenant Events (demo)",
                    grant_types=native,
                    api_scopes=(READ_EVENTS,),
                    redirect_uris=tuple(f"http://{h}/callback" for h in LOOPBACK_HOSTS),
                    loopback_any_port=True,
                ),
                Client(
                    EXACT_CLIENT_ID,
                    "Tenant Events (exact redirects)",
                    grant_types=native,
                    api_scopes=(READ_EVENTS,),
                    redirect_uris=tuple(f"http://127.0.0.1:{p}/callback" for p in EXACT_PORTS),
                    logout_urls=tuple(f"http://127.0.0.1:{p}/" for p in EXACT_PORTS),
                ),
                Client(
                    SERVICE_CLIENT_ID,
                    "Demo service",
                    secret(SERVICE_CLIENT_ID),
                    cc,
                    api_scopes=(READ_EVENTS,),
                ),
                Client(
                    NONGLOBAL_CLIENT_ID,
                    "Non-global service",
                    secret(NONGLOBAL_CLIENT_ID),
                    cc,
                    is_global=False,
                    api_scopes=(READ_EVENTS,),
                ),
                Client(NOSCOPE_CLIENT_ID, "Service without read:events", secret(NOSCOPE_CLIENT_ID), cc),
            )
        }

    def get(self, client_id: str | None) -> Client | None:
        return self.clients.get(client_id or "")
