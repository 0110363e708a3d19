"""How a connection attempt ended, why, and how long to wait before the next one.

A follower (the stream engine, the hub viewer) runs one attempt at a time; each attempt ends with an `Outcome`:
the state to show, a person's message, a machine `Reason`, and either a fixed delay, "use the backoff" (delay
< 0) or `terminal`. `Reconnects` makes the backoff decision and forgets it after an attempt that made progress
on a connection that lived a while. The reasons travel on as `StateChange.reason` (a `StrEnum`, so observers
that compare with plain strings keep working).

No reconnect storm, whatever the server or the options say: attempts start at least `min_interval` apart; a
connection that ended within `steady_after` seconds (a server that answers one message and hangs up, a 429
with `Retry-After: 0`, a stall timeout of nothing) never reconnects at once and never resets the backoff, so its
waits grow to the cap; and every delay is a finite number of seconds in a sane range (backoff.bounded).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Final

from tenant_events.stream.backoff import MAX_WAIT, Backoff, bounded
from tenant_events.stream.request import bad_parameter, events_url
from tenant_events.values.stream_states import StreamState

USE_BACKOFF = -1.0
MIN_INTERVAL: Final = 0.5  # seconds between the starts of two attempts, whatever ended the first
STEADY_AFTER: Final = 5.0  # seconds a connection must live before its end counts as routine (rotation, stall)
MIN_RATE_LIMIT_WAIT: Final = 1.0  # seconds: a 429 saying "retry now" (0, negative) still waits this long


class Reason(StrEnum):
    """Why the state changed; the values are the machine words observers (CLI, logs, tests) see."""

    CONNECTING = "connecting"
    CONNECTED = "connected"
    CATCHING_UP = "catching_up"
    LIVE = "live"
    PAUSED = "paused"
    STOPPED = "stopped"
    INTERRUPTED = "interrupted"  # pause(), nudge() or stop() cut the attempt short: no backoff
    STORAGE = "storage"  # the database could not be written: pause, then resume from the stored cursor
    INTERNAL_ERROR = "internal_error"
    NETWORK = "network"
    STALLED = "stalled"
    ROTATION = "rotation"
    EMPTY_STREAM = "empty_stream"
    STREAM_ERROR = "stream_error"
    CURSOR_EXPIRED = "cursor_expired"
    SIGNED_OUT = "signed_out"
    SIGN_IN_BUSY = "sign_in_busy"  # another process is refreshing the sign-in: wait, retry (not signed out)
    UNAUTHORIZED = "unauthorized"
    TOKEN_REFRESHED = "token_refreshed"
    TOO_MANY_CONNECTIONS = "too_many_connections"
    MISSING_SCOPE = "missing_scope"
    RATE_LIMITED = "rate_limited"
    BAD_REQUEST = "bad_request"
    NOT_FOUND = "not_found"
    SERVER_ERROR = "server_error"
    HTTP_ERROR = "http_error"
    UNTRUSTED_CERTIFICATE = "untrusted_certificate"


@dataclass
class Outcome:
    """How one attempt ended and what to do next."""

    state: StreamState
    message: str
    reason: StrEnum
    delay: float = 0.0  # seconds before the next attempt; USE_BACKOFF (<0) means "use the backoff"
    terminal: bool = False
    progress: bool = False


@dataclass
class Reconnects:
    """The backoff decision: the outcome's own delay, or the next jittered backoff; progress on a connection
    that lived `steady_after` seconds resets it."""

    backoff: Backoff
    busy: Backoff = field(default_factory=Backoff.busy)  # 403 too many connections (backoff.py)
    min_interval: float = MIN_INTERVAL
    steady_after: float = STEADY_AFTER

    def __post_init__(self) -> None:
        self.min_interval = bounded(self.min_interval, default=MIN_INTERVAL, low=0.05, high=60.0)
        self.steady_after = bounded(self.steady_after, default=STEADY_AFTER, low=0.0, high=MAX_WAIT)

    def progressed(self) -> None:
        self.backoff.reset()
        self.busy.reset()

    def ended(self, outcome: Outcome, lived: float) -> None:
        """Take note of an attempt that lived `lived` seconds: its progress resets the backoff only if it lasted."""
        if outcome.progress and lived >= self.steady_after:
            self.progressed()

    def delay(self, outcome: Outcome, lived: float = math.inf) -> float:
        """Seconds to wait after `outcome`. A short-lived attempt waits at least the next backoff delay, so a
        server that keeps ending connections at once (or asking for an immediate retry) meets a growing wait."""
        if outcome.delay < 0 or not math.isfinite(outcome.delay):
            return self.backoff.next_delay()
        own = bounded(outcome.delay, default=0.0, low=0.0)
        if lived < self.steady_after:
            return max(own, self.backoff.next_delay())
        return own


def refused(status: int, text: str, base_url: str, busy: Backoff) -> Outcome:
    """What an HTTP refusal of the stream request means (401 and 410 need the engine: token refresh, cursor)."""
    if status == 403:
        lowered = text.lower()
        if "concurrent" in lowered or "connections" in lowered:
            return Outcome(
                StreamState.TOO_MANY_CONNECTIONS,  # said as "another connection is still open" (values/stream_states.py)
                "the tenant allows only a few event streams at once; if this lasts, close other apps or CLI "
                f"sessions following it ({text})",
                Reason.TOO_MANY_CONNECTIONS,
                busy.next_delay(),
            )
        return Outcome(
            StreamState.ERROR,
            f"access denied: the token lacks the read:events scope ({text})",
            Reason.MISSING_SCOPE,
            terminal=True,
        )
    if status == 400:
        return Outcome(
            StreamState.ERROR,
            f"the tenant refused {bad_parameter(text)}: {text}",
            Reason.BAD_REQUEST,
            terminal=True,
        )
    if status == 404:
        return Outcome(
            StreamState.ERROR,
            f"not found: {events_url(base_url)} — check the tenant domain or base URL",
            Reason.NOT_FOUND,
            terminal=True,
        )
    if status >= 500:
        return Outcome(
            StreamState.RECONNECTING, f"server error {status}: {text}", Reason.SERVER_ERROR, USE_BACKOFF
        )
    return Outcome(StreamState.ERROR, f"unexpected HTTP {status}: {text}", Reason.HTTP_ERROR, terminal=True)


def sign_in_busy(waiting: str) -> Outcome:
    """Another process has held the sign-in's refresh lock for a whole wait: retry with the backoff; the next
    attempt takes the token that process stores (auth/session.py reads it under the lock)."""
    return Outcome(StreamState.RECONNECTING, waiting, Reason.SIGN_IN_BUSY, USE_BACKOFF)


def rate_limited(until: float) -> Outcome:
    """429: wait until the time the tenant named (X-RateLimit-Reset / Retry-After), at least a second and at most
    an hour (a NaN or infinite time waits a minute)."""
    now = time.time()
    wait = bounded(until - now, default=60.0, low=MIN_RATE_LIMIT_WAIT, high=MAX_WAIT)
    shown = time.strftime("%H:%M:%S", time.localtime(now + wait))
    return Outcome(StreamState.RATE_LIMITED, f"rate limited until {shown}", Reason.RATE_LIMITED, wait)


_BROKEN: Final = {
    "RemoteProtocolError": "the server broke off mid-message",
    "ReadError": "the connection broke",
    "ReadTimeout": "nothing arrived in time",
}


def connection_lost(exc: Exception, *, progress: bool) -> Outcome:
    """A stream that broke while reading: said in words, with the library's name for it to search for."""
    name = type(exc).__name__
    how = f"{_BROKEN[name]} ({name})" if name in _BROKEN else name
    return Outcome(
        StreamState.RECONNECTING, f"connection lost: {how}", Reason.NETWORK, USE_BACKOFF, progress=progress
    )
