"""One delivery attempt through Apprise, and what its result means for the next one.

Apprise reports only success or failure; to tell "try again" from "stop", each attempt records the HTTP responses
and exceptions of its own thread (a pass-through wrapper around requests' Session.send) and Apprise's log lines
(kept to this attempt, never written to the app's log: they can name hosts and paths that hold tokens).

    2xx                      delivered
    3xx                      stop: a redirect is not followed (it would carry the URL's secret headers elsewhere)
    401, 403, 404, 410       stop: the URL or the token is wrong (the reason is shown until the URL changes)
    429                      retry after Retry-After (seconds or an HTTP date, clamped to 1 s – 1 h)
    408, other 4xx, 5xx,     retry with jittered exponential backoff (worker.py)
    timeouts, network errors

Each attempt has one deadline for all of it — connecting, sending, every read — not a timeout per read: a
receiver that trickles its answer a byte at a time never trips a read timeout. The sockets an attempt opens
(requests' through urllib3, e-mail's through smtplib) are its own; at the deadline, or when the owner ends its
attempts (`Attempts.end`, a worker that stops), they are shut down, and the attempt ends at once with "no
answer". Of an answer, at most ANSWER_MAX bytes are read: what a receiver says beyond is not needed.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from http import HTTPStatus
from typing import Any, Final, Literal

from tenant_events.destinations.message import AlertMessage, shape
from tenant_events.destinations.urls import instantiate, quiet_apprise_log
from tenant_events.server_text import shown

STOP_CODES: Final = frozenset({401, 403, 404, 410})
RETRY_AFTER_MAX: Final = 3600.0
READ_TIMEOUT: Final = 15.0  # a slow receiver (5 s) still answers; Apprise's own default is 4 s
DEADLINE_S: Final = 20.0  # the whole attempt: connect, send, read (a slow receiver's 5 s fits well)
ANSWER_MAX: Final = 64 * 1024  # bytes of an answer read; a 200 MB one is not read whole
_local = threading.local()
_installed = threading.Lock()
_patched = False


@dataclass(frozen=True, slots=True)
class Outcome:
    kind: Literal["delivered", "retry", "stop"]
    reason: str = ""
    retry_after: float | None = None  # seconds the receiver asked for (429)


@dataclass(slots=True, eq=False)
class _Attempt:
    deadline: float = 0.0  # time.monotonic() when it must have ended
    statuses: list[tuple[int, str | None]] = field(default_factory=list)  # (status, Retry-After)
    errors: list[str] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    redirect: str = ""  # where a 3xx pointed (its host), not followed
    sockets: list[socket.socket] = field(default_factory=list)
    ended: str = ""  # why it was ended from outside ("" while it runs)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def adopt(self, sock: socket.socket) -> None:
        """A socket this attempt opened: shut down with it (at once, when it has ended already)."""
        with self.lock:
            self.sockets.append(sock)
            ended = bool(self.ended)
        if ended:
            _shut(sock)

    def end(self, why: str) -> None:
        with self.lock:
            if self.ended:
                return
            self.ended = why
            sockets = list(self.sockets)
        for sock in sockets:
            _shut(sock)


def _shut(sock: socket.socket) -> None:
    """Wake whatever blocks on `sock` in another thread (a read, a write, a TLS handshake)."""
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


class Attempts:
    """The attempts in flight of one owner (a delivery worker), so that it can end them when it stops."""

    def __init__(self) -> None:
        self._live: set[_Attempt] = set()
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def running(self, attempt: _Attempt) -> Iterator[None]:
        with self._lock:
            self._live.add(attempt)
        try:
            yield
        finally:
            with self._lock:
                self._live.discard(attempt)

    def end(self, why: str = "stopped before the receiver answered") -> None:
        with self._lock:
            live = list(self._live)
        for attempt in live:
            attempt.end(why)


class _AttemptLog(logging.Handler):
    """Apprise's log lines go to the attempt running on the same thread, not to the app's log."""

    def emit(self, record: logging.LogRecord) -> None:
        attempt: _Attempt | None = getattr(_local, "attempt", None)
        if attempt is not None and record.levelno >= logging.WARNING:
            attempt.log.append(record.getMessage())


def _install() -> None:
    """The pass-through wrappers; each acts only on a thread running an attempt."""
    global _patched
    with _installed:
        if _patched:
            return
        apprise_log = quiet_apprise_log()  # first: it also quiets a warning that importing requests may give
        import requests
        import requests.adapters
        import urllib3.util.connection

        original: Callable[..., Any] = requests.sessions.Session.send
        adapter_send: Callable[..., Any] = requests.adapters.HTTPAdapter.send
        connect: Callable[..., socket.socket] = urllib3.util.connection.create_connection

        def send(self: Any, request: Any, **kwargs: Any) -> Any:
            attempt: _Attempt | None = getattr(_local, "attempt", None)
            if attempt is not None:
                kwargs["allow_redirects"] = False  # a redirect carries the URL's headers to another place
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
                if response.is_redirect:
                    attempt.redirect = _host(response.headers.get("Location", ""))
            return response

        def send_capped(self: Any, request: Any, stream: bool = False, **kwargs: Any) -> Any:
            """The answer's head, then at most ANSWER_MAX bytes of its body (the connection is then closed)."""
            attempt: _Attempt | None = getattr(_local, "attempt", None)
            if attempt is None:
                return adapter_send(self, request, stream=stream, **kwargs)
            response = adapter_send(self, request, stream=True, **kwargs)
            try:
                body = response.raw.read(ANSWER_MAX, decode_content=True)
            except Exception as exc:  # the deadline or a broken connection in the middle of the body
                response.close()
                raise requests.ConnectionError(f"the answer was cut off ({exc.__class__.__name__})") from None
            response._content, response._content_consumed = body, True
            response.close()
            return response

        def create_connection(address: Any, timeout: Any = None, *args: Any, **kwargs: Any) -> socket.socket:
            attempt: _Attempt | None = getattr(_local, "attempt", None)
            if attempt is None:
                return connect(address, timeout, *args, **kwargs)
            left = attempt.left()
            if left <= 0 or attempt.ended:
                raise TimeoutError("the attempt's time is up")
            if not isinstance(timeout, int | float) or timeout > left:
                timeout = left
            sock = connect(address, timeout, *args, **kwargs)
            attempt.adopt(sock)
            return sock

        requests.sessions.Session.send = send  # type: ignore[method-assign]
        requests.adapters.HTTPAdapter.send = send_capped  # type: ignore[method-assign,assignment]
        urllib3.util.connection.create_connection = create_connection
        _own_smtp_sockets()
        apprise_log.addHandler(_AttemptLog())
        _patched = True


def _own_smtp_sockets() -> None:
    """E-mail goes through smtplib, not requests: its sockets belong to the attempt too."""
    import smtplib

    get_socket: Callable[..., socket.socket] = smtplib.SMTP._get_socket  # type: ignore[attr-defined]

    def own(self: Any, host: str, port: int, timeout: float) -> socket.socket:
        attempt: _Attempt | None = getattr(_local, "attempt", None)
        if attempt is not None:
            left = attempt.left()
            if left <= 0 or attempt.ended:
                raise TimeoutError("the attempt's time is up")
            timeout = min(timeout, left) if isinstance(timeout, int | float) else left
        sock = get_socket(self, host, port, timeout)
        if attempt is not None:
            attempt.adopt(sock)
        return sock

    smtplib.SMTP._get_socket = own  # type: ignore[attr-defined]


def _host(location: str) -> str:
    """The host a redirect points to (only that: its path may carry a token)."""
    from urllib.parse import urlsplit

    with contextlib.suppress(ValueError):
        return urlsplit(location).hostname or ""
    return ""


def _notify_type(severity: str) -> Any:
    from apprise import NotifyType

    return {"info": NotifyType.INFO, "warning": NotifyType.WARNING}.get(severity, NotifyType.FAILURE)


def prepare(url: str, message: AlertMessage) -> Any:
    """The Apprise plugin for one attempt, carrying the message's keys where the service has a place for them
    (message.py `shape`)."""
    plugin = instantiate(url)
    plugin.request_rate_per_sec = 0  # Apprise waits 5.5 s between two sends of one plugin otherwise
    plugin.redirects = False  # (the requests wrapper refuses them anyway, for plugins that ignore this)
    if "rto=" not in url:
        plugin.socket_read_timeout = READ_TIMEOUT
    shape(plugin, message)
    return plugin


def send(
    url: str, message: AlertMessage, attempts: Attempts | None = None, deadline: float = DEADLINE_S
) -> Outcome:
    """One attempt (blocking: run it in a thread), over within `deadline` seconds; `attempts` lets its owner
    end it sooner. Never raises for the receiver's answers."""
    _install()
    attempt = _Attempt(deadline=time.monotonic() + deadline)
    timer = threading.Timer(deadline, attempt.end, (f"no complete answer within {deadline:g} s",))
    timer.daemon = True
    _local.attempt = attempt
    timer.start()
    try:
        with attempts.running(attempt) if attempts is not None else contextlib.nullcontext():
            plugin = prepare(url, message)
            ok = bool(
                plugin.notify(
                    body=message.body, title=message.title, notify_type=_notify_type(message.severity)
                )
            )
    except Exception as exc:  # a plugin bug must not stop the worker; the reason says what failed
        return Outcome(
            "retry", attempt.ended or f"the notification could not be sent ({exc.__class__.__name__})"
        )
    finally:
        timer.cancel()
        _local.attempt = None
        for sock in attempt.sockets:  # (requests closes its own; a socket left by a cut-off attempt is not)
            with contextlib.suppress(OSError):
                sock.close()
    return classify(ok, attempt)


def classify(ok: bool, attempt: _Attempt) -> Outcome:
    if attempt.ended:  # (an answer cut off at its head may look whole to http.client: it is not trusted)
        return Outcome("retry", attempt.ended)
    if ok:
        return Outcome("delivered")
    if attempt.statuses:
        status, retry_after = attempt.statuses[-1]
        phrase = _phrase(status)
        if 300 <= status < 400:
            where = f" to {shown(attempt.redirect, 100)}" if attempt.redirect else ""
            return Outcome(
                "stop",
                f"HTTP {status}{phrase}: the receiver redirects{where}; redirects are not followed (they "
                "would carry the URL's secret headers there): give the URL it redirects to",
            )
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
