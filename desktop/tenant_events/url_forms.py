"""URL spellings the profiles need: one form per stream URL, and the exact loopback callback URLs to register.

A leaf module (stdlib only) under the settings package, whose profiles and document use it.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

DEFAULT_CALLBACK_PORT = 53682  # the fixed port the README suggests registering


def normalize_url(url: str) -> str:
    """One spelling per place: lower-case scheme and host, no default port, no trailing slash."""
    parts = urlsplit(url.strip())
    scheme, host = parts.scheme.lower(), parts.hostname or ""
    try:
        port = parts.port
    except ValueError:  # not a port number: leave it to the URL checks to refuse
        return url.strip().rstrip("/")
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port is None or port == {"http": 80, "https": 443}.get(scheme) else f"{host}:{port}"
    return urlunsplit((scheme, netloc, parts.path.rstrip("/"), parts.query, ""))


def loopback_callbacks(ports: list[int]) -> list[str]:
    """The exact callback URLs to register for these fixed ports; with none, the port-less loopback URL that
    tenants following RFC 8252 §7.3 match on any port (Auth0 does not: it needs a fixed port)."""
    if ports:
        return [f"http://127.0.0.1:{port}/callback" for port in ports]
    return ["http://127.0.0.1/callback"]


ALERT_SCHEME = "tenant-events"


def alert_link(tenant: str, alert_id: int) -> str:
    """`tenant-events://alert/<tenant>/<id>`: opens the alert in the app (the desktop file registers the scheme)."""
    from urllib.parse import quote

    return f"{ALERT_SCHEME}://alert/{quote(tenant, safe='')}/{int(alert_id)}"
