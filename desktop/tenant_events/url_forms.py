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


ALERT_LINK_SCHEME = "tenant-events"


def alert_link(tenant: str, alert_id: int) -> str:
    """The link that opens one alert in the app (the desktop file registers the scheme)."""
    return f"{ALERT_LINK_SCHEME}://alert/{tenant}/{alert_id}"


def parse_alert_link(text: str) -> tuple[str, int] | None:
    """(tenant, alert id) of an alert link; None for anything else (a link any web page can hand the desktop:
    never a crash), so a stray argument opens nothing."""
    try:
        parts = urlsplit(text.strip())
    except ValueError:  # e.g. a "[" that opens no IPv6 address
        return None
    if parts.scheme.lower() != ALERT_LINK_SCHEME or parts.netloc.lower() != "alert":
        return None
    pieces = parts.path.strip("/").split("/")
    if len(pieces) != 2 or not pieces[0] or not pieces[1].isascii() or not pieces[1].isdigit():
        return None
    if len(pieces[1]) > 19 or not 1 <= int(pieces[1]) <= 2**63 - 1:  # a database row id
        return None
    tenant, number = pieces
    if len(tenant) > 64 or not all(
        c in "abcdefghijklmnopqrstuvwxyz0123456789-" for c in tenant
    ):  # a profile name
        return None
    return tenant, int(number)
