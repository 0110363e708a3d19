"""Apprise URLs: checked, and masked for display and files.

Apprise's own privacy form masks passwords and tokens it knows about; custom headers (`+Authorization=…`),
extra query parameters (`-key=…`), payload fields (`:field=…`) and webhook paths can carry secrets too, so they
are masked here as well. Apprise's default options are left out: they only make the line long.
"""

from __future__ import annotations

import hashlib
import logging
import warnings
from typing import Any, Final
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

from tenant_events.errors import ConfigError

_NOISE: Final = frozenset(
    {
        "overflow",
        "retry",
        "wait",
        "optional",
        "image",
        "footer",
        "timestamp",
        "blocks",
        "mode",
        "method",
        "format",
        "rto",
        "cto",
        "verify",
        "emojis",
        "tz",
        "store",
    }
)
MASK: Final = "***"


def quiet_apprise_log() -> logging.Logger:
    """Apprise's logger, kept out of the app's log: it prints whole URLs it cannot parse, and at debug level
    the URLs and payloads it sends (send.py hands its warnings to the attempt that caused them)."""
    # The installed app leaves out requests' optional character-set guesser (packaging/tenant-events.spec).
    warnings.filterwarnings("ignore", message="Unable to find acceptable character detection dependency")
    apprise_log = logging.getLogger("apprise")
    apprise_log.propagate = False
    apprise_log.setLevel(logging.WARNING)
    return apprise_log


def instantiate(url: str) -> Any:
    """The Apprise plugin for `url`; ConfigError naming the problem when Apprise cannot use it."""
    quiet_apprise_log()
    import apprise

    text = url.strip()
    if "://" not in text:
        raise ConfigError(
            "destination url",
            "is not an Apprise URL (scheme://…)",
            "e.g. json://host/path, mailtos://user:pass@host, slack://…, pagerduty://…",
        )
    scheme = text.split("://", 1)[0].lower()
    plugin = apprise.Apprise.instantiate(text, suppress_exceptions=True)
    if plugin is None:
        from apprise.manager_plugins import NotificationManager

        if scheme in NotificationManager():  # type: ignore[no-untyped-call]
            raise ConfigError(
                "destination url",
                f"is not a complete {scheme}:// URL",
                "see the Apprise wiki page of that service for its URL form",
            )
        raise ConfigError(
            "destination url",
            f"{scheme}:// is not a service Apprise knows",
            "e.g. json://, mailtos://, slack://, msteams://, pagerduty://, ntfy://",
        )
    return plugin


def mask(url: str) -> str:
    """`url` with every part that may be secret masked: safe for the settings file, logs and the screen."""
    try:
        private = str(instantiate(url).url(privacy=True))
    except ConfigError:
        private = url.strip()
    parts = urlsplit(private)
    netloc = parts.netloc
    if "@" in netloc:
        user, host = netloc.rsplit("@", 1)
        name = user.split(":", 1)[0]
        netloc = f"{name}:{MASK}@{host}" if ":" in user else f"{name}@{host}"
    segments = [s for s in parts.path.split("/") if s]
    path = "/".join([segments[0], *[MASK for _ in segments[1:]]]) if segments else ""
    if segments and any(len(s) >= 16 for s in segments[:1]):
        path = MASK + path[len(segments[0]) :]
    query = []
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key.lower() in _NOISE:
            continue
        secret = key[:1] in "+-:" or any(w in key.lower() for w in ("key", "token", "secret", "pass", "auth"))
        query.append(f"{quote(key, safe='+-:')}={MASK if secret and value else quote(value, safe='@.,')}")
    return urlunsplit((parts.scheme, netloc, f"/{path}" if path else "", "&".join(query), ""))


def legacy_fingerprint(url: str) -> str:
    """The hash of the whole URL an older version kept in the settings file (64 bits of unsalted SHA-256: a
    guess could be checked against it). Only to recognise that URL once, when it is moved to this data dir's
    keyring slot (registry.py); never written."""
    return hashlib.sha256(url.strip().encode()).hexdigest()[:16]
