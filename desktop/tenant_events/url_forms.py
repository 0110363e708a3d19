"""URL spellings the profiles need: one form per stream URL, and the exact loopback callback URLs to register.

A leaf module (stdlib only) under the settings package, whose profiles and document use it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final
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
TEAM_ALERT: Final = "team-alert"  # a team delivery's link: the alert by its name on the hub
_PROFILE: Final = re.compile(r"[a-z0-9-]{1,64}")  # a profile's name, a hub tenant's too
_TEAM_KEY: Final = re.compile(
    r"[A-Za-z0-9_-]{1,128}\.[A-Za-z0-9_-]{1,128}"
)  # <rule>.<first event> on the hub


@dataclass(frozen=True, slots=True)
class AlertLink:
    """The alert a link opens: one of a profile's alerts by its id in that profile's database; or, from a team's
    delivery, a team alert by its name on the hub (`team_key`), since each teammate's copy has an id of its own."""

    tenant: str  # the profile's name; for a team alert, the tenant's name on the hub
    alert_id: int = 0
    team_key: str = ""


def alert_link(tenant: str, alert_id: int) -> str:
    """The link that opens one alert in the app (the desktop file registers the scheme)."""
    return f"{ALERT_LINK_SCHEME}://alert/{tenant}/{alert_id}"


def team_alert_link(hub_tenant: str, team_key: str) -> str:
    """The link that opens a team alert in any teammate's app that reads `hub_tenant` from the hub."""
    return f"{ALERT_LINK_SCHEME}://{TEAM_ALERT}/{hub_tenant}/{team_key}"


def parse_alert_link(text: str) -> AlertLink | None:
    """The alert a link names; None for anything else (a link any web page can hand the desktop: never a
    crash), so a stray argument opens nothing."""
    try:
        parts = urlsplit(text.strip())
    except ValueError:  # e.g. a "[" that opens no IPv6 address
        return None
    kind = parts.netloc.lower()
    if parts.scheme.lower() != ALERT_LINK_SCHEME or kind not in ("alert", TEAM_ALERT):
        return None
    pieces = parts.path.strip("/").split("/")
    if len(pieces) != 2 or not _PROFILE.fullmatch(pieces[0]):
        return None
    tenant, name = pieces
    if kind == TEAM_ALERT:
        return AlertLink(tenant, team_key=name) if _TEAM_KEY.fullmatch(name) else None
    if not name.isascii() or not name.isdigit() or len(name) > 19 or not 1 <= int(name) <= 2**63 - 1:
        return None  # not a database row id
    return AlertLink(tenant, int(name))
