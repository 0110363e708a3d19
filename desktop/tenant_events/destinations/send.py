"""One delivery attempt through Apprise, and what its result means for the next one.

Apprise reports only success or failure; to tell "try again" from "stop", each attempt records the HTTP responses
and exceptions of its own thread (a pass-through wrapper around requests' Session.send) and Apprise's log lines
(kept to this attempt, never written to the app's log: they can name hosts and paths that hold tokens).

    2xx                      delivered
    401, 403, 404, 410       stop: the URL or the token is wrong (the reason is shown until the URL changes)
    429                      retry after Retry-After (seconds or an HTTP date, clamped to 1 s – 1 h)
    408, other 4xx, 5xx,     retry with jittered exponential backoff (worker.py)
    timeouts, network errors
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from http import HTTPStatus
from typing import Any, Final, Literal

from tenant_events.destinations.message import AlertMessage, shape
from tenant_events.destinations.urls import instantiate, quiet_apprise_log

STOP_CODES: Final = frozenset({401, 403, 404, 410})
RETRY_AFTER_MAX: Final = 3600.0
READ_TIMEOUT: Final = 15.0  # a slow receiver (5 s) still answers; Apprise's own default is 4 s
_local = threading.local()
_installed = threading.Lock()
_patched = False


@dataclass(frozen=True, slots=True)
class Outcome:
    kind: Literal["delivered", "retry", "stop"]
    reason: str = ""
    retry_after: float | None = None  # seconds the receiver asked for (429)


@dataclass(slots=True)
class _Attempt:
    statuses: list[tuple[int, str | None]] = field(default_factory=list)  # (status, Retry-After)
    errors: list[str] = field(default_factory=list)
    log: list[str] = field(default_factory=list)


class _AttemptLog(logging.Handler):
    """Apprise's log lines go to the attempt running on the same thread, not to the app's log."""

    def emit(self, record: logging.LogRecord) -> None:
        attempt: _Attempt | None = getattr(_local, "attempt", None)
        if attempt is not None and record.levelno >= logging.WARNING:
            attempt.log.append(record.getMessage())


def _install() -> None:
    global _patched
    with _installed:
        if _patched:
            return
        apprise_log = quiet_apprise_log()  # first: it also quiets a warning that importing requests may give
        import requests

        original: Callable[..., Any] = requests.sessions.Session.send

        def send(self: Any, request: Any, **kwargs: Any) -> Any:
            attempt: _Attempt | None = getattr(_local, "attempt", None)
            try:
                response = original(self, request, **kwargs)
            except requests.Timeout:
                if attempt is not None:
                    attempt.errors.append("timed out")
                raise
            except requests.ConnectionError:
                if attempt is not None:
                    attempt.errors.append("cannot connect")
                raise
            if attempt is not None:
                attempt.statuses.append((response.status_code, response.headers.get("Retry-After")))
            return response

        requests.sessions.Session.send = send  # type: ignore[method-assign]
        apprise_log.addHandler(_AttemptLog())
        _patched = True


def _notify_type(severity: str) -> Any:
    from apprise import NotifyType

    return {"info": NotifyType.INFO, "warning": NotifyType.WARNING}.get(severity, NotifyType.FAILURE)


def prepare(url: str, message: AlertMessage) -> Any:
    """The Apprise plugin for one attempt, carrying the message's keys where the service has a place for them
    (message.py `shape`)."""
    plugin = instantiate(url)
    plugin.request_rate_per_sec = 0  # Apprise waits 5.5 s between two sends of one plugin otherwise
    if "rto=" not in url:
        plugin.socket_read_timeout = READ_TIMEOUT
    shape(plugin, message)
    return plugin


def send(url: str, message: AlertMessage) -> Outcome:
    """One attempt (blocking: run it in a thread). Never raises for the receiver's answers."""
    _install()
    attempt = _Attempt()
    _local.attempt = attempt
    try:
        plugin = prepare(url, message)
        ok = bool(
            plugin.notify(body=message.body, title=message.title, notify_type=_notify_type(message.severity))
        )
    except Exception as exc:  # a plugin bug must not stop the worker; the reason says what failed
        return Outcome("retry", f"the notification could not be sent ({exc.__class__.__name__})")
    finally:
        _local.attempt = None
    return classify(ok, attempt)


def classify(ok: bool, attempt: _Attempt) -> Outcome:
    if ok:
        return Outcome("delivered")
    if attempt.statuses:
        status, retry_after = attempt.statuses[-1]
        phrase = _phrase(status)
        if status in STOP_CODES:
            return Outcome("stop", f"HTTP {status}{phrase}: the receiver refused the URL or its token")
        if status == 429:
            return Outcome("retry", f"HTTP 429{phrase}", retry_after_seconds(retry_after))
        return Outcome("retry", f"HTTP {status}{phrase}")
    if attempt.errors:
        return Outcome("retry", attempt.errors[-1])
    if attempt.log:
        return Outcome("retry", _printable(attempt.log[-1])[:200])
    return Outcome("retry", "the service did not accept the notification")


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Retry-After as seconds from now, within 1 s – 1 h; None when absent or not a number or a date."""
    if not value:
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            seconds = parsedate_to_datetime(text).timestamp() - (time.time() if now is None else now)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
    if seconds != seconds:  # NaN
        return None
    return min(max(seconds, 1.0), RETRY_AFTER_MAX)


def _phrase(status: int) -> str:
    try:
        return f" {HTTPStatus(status).phrase}"
    except ValueError:
        return ""


def _printable(text: str) -> str:
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text)
