"""The one place where HTTP clients are made: timeouts, TLS trust, user agent.

`stream/` and `auth/` ask this module for clients and never construct one themselves, so the HTTP library
could be swapped here alone. TLS verification is always on for non-loopback hosts; plain `http://` is allowed
only for loopback (the bundled simulator, RFC 8252 redirects).
"""

from __future__ import annotations

import ipaddress
import os
import ssl
from typing import Final
from urllib.parse import urlsplit

import httpx

from tenant_events import __version__

USER_AGENT: Final = f"TenantEvents/{__version__}"
# Stream reads have no read timeout of their own: the engine's stall watchdog decides when a quiet stream is dead.
STREAM_TIMEOUT: Final = httpx.Timeout(connect=10.0, read=None, write=10.0, pool=10.0)
REQUEST_TIMEOUT: Final = httpx.Timeout(15.0, connect=10.0)


class InsecureURLError(ValueError):
    """A URL that would send tokens in clear text to a non-loopback host, or that is not a URL at all."""


def is_loopback_host(host: str | None) -> bool:
    """True for localhost and any 127.0.0.0/8 or ::1 literal."""
    if not host:
        return False
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_url(url: str) -> str:
    """Return `url` if its scheme is https, or http to a loopback host; raise InsecureURLError otherwise."""
    try:
        parts = urlsplit(url)
        _ = parts.port  # a port that is not a number from 0 to 65535 raises here, not in the first request
    except ValueError as exc:  # "[::1", "[zz::1]", ":99999", ":abc"
        raise InsecureURLError(f"{url!r} is not a valid URL: {exc}") from None
    host = parts.hostname or ""
    if any(ch.isspace() or not ch.isprintable() or ch in '<>\\^`{|}"' for ch in host):
        raise InsecureURLError(
            f"{url!r} is not a valid URL: its host has a space or a character no host name has"
        )
    if parts.scheme == "https" and parts.hostname:
        return url
    if parts.scheme == "http" and is_loopback_host(parts.hostname):
        return url
    if parts.scheme == "http":
        raise InsecureURLError(f"{url!r} uses http:// to a non-loopback host; use https://")
    raise InsecureURLError(f"{url!r} is not an http(s) URL")


def _ssl_context() -> ssl.SSLContext:
    # httpx honours SSL_CERT_FILE/SSL_CERT_DIR first; a stale variable (common in frozen apps) must not make every
    # request fail with FileNotFoundError (httpx reads them first), so only use them when they exist.
    cafile = os.environ.get("SSL_CERT_FILE")
    capath = os.environ.get("SSL_CERT_DIR")
    if (cafile and os.path.isfile(cafile)) or (capath and os.path.isdir(capath)):
        return ssl.create_default_context(
            cafile=cafile if cafile and os.path.isfile(cafile) else None,
            capath=capath if capath and os.path.isdir(capath) else None,
        )
    try:
        import certifi

        ctx = ssl.create_default_context(cafile=certifi.where())
    except ImportError:  # pragma: no cover - certifi comes with httpx
        ctx = ssl.create_default_context()
    ctx.load_default_certs()
    return ctx


def stream_client() -> httpx.AsyncClient:
    """A client for long-lived SSE streams: no read timeout, no redirects, one connection."""
    return httpx.AsyncClient(
        timeout=STREAM_TIMEOUT,
        verify=_ssl_context(),
        trust_env=False,
        follow_redirects=False,
        headers={"User-Agent": USER_AGENT},
        limits=httpx.Limits(max_connections=4, max_keepalive_connections=0),
    )


def api_client() -> httpx.AsyncClient:
    """A client for short requests (discovery, token, revoke, userinfo). A connection idle for 2 s is not used
    again: servers often close theirs after 5 s, and a request written as one closes is read by nobody (the code
    exchange follows discovery after the user's time in the browser)."""
    return httpx.AsyncClient(
        timeout=REQUEST_TIMEOUT,
        verify=_ssl_context(),
        trust_env=False,
        follow_redirects=False,
        headers={"User-Agent": USER_AGENT, "Accept": "application/json"},
        limits=httpx.Limits(keepalive_expiry=2.0),
    )


def untrusted_certificate(exc: BaseException) -> str | None:
    """The verifier's reason when `exc` (or what caused it) is a failed TLS certificate check, else None.

    Such a failure is not a flaky network: retrying cannot fix it, and the user needs to hear that the server's
    identity could not be proven (a wrong domain, a TLS-inspecting proxy, an attack), not "check your network".
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ssl.SSLCertVerificationError):
            return str(current.verify_message or current.reason or current)
        if "CERTIFICATE_VERIFY_FAILED" in str(current):  # httpx/httpcore re-raise it as text
            return str(current).split("certificate verify failed:", 1)[-1].split("(_ssl", 1)[0].strip()
        current = current.__cause__ or current.__context__
    return None


# Re-exported so callers name errors without importing httpx themselves.
HTTPError = httpx.HTTPError
TransportError = httpx.TransportError
Response = httpx.Response
AsyncClient = httpx.AsyncClient
