"""How a connection attempt ended, why, and how long to wait before the next one.

A follower (the stream engine, the hub viewer) runs one attempt at a time; each attempt ends with an `Outcome`:
the state to show, a person's message, a machine `Reason`, and either a fixed delay, "use the backoff" (delay
< 0) or `terminal`. `Reconnects` makes the backoff decision and forgets it after an attempt that made progress.
The reasons travel on as `StateChange.reason` (a `StrEnum`, so observers that compare with plain strings keep
working).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import StrEnum

from tenant_events.stream.backoff import Backoff
from tenant_events.stream.request import bad_parameter, events_url
from tenant_events.stream.states import StreamState

USE_BACKOFF = -1.0


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
    """The backoff decision: the outcome's own delay, or the next jittered backoff; progress resets it."""

    backoff: Backoff
    busy: Backoff = field(default_factory=Backoff.busy)  # 403 too many connections (backoff.py)

    def progressed(self) -> None:
        self.backoff.reset()
        self.busy.reset()

    def delay(self, outcome: Outcome) -> float:
        return self.backoff.next_delay() if outcome.delay < 0 else outcome.delay


def refused(status: int, text: str, base_url: str, busy: Backoff) -> Outcome:
    """What an HTTP refusal of the stream request means (401 and 410 need the engine: token refresh, cursor)."""
    if status == 403:
        lowered = text.lower()
        if "concurrent" in lowered or "connections" in lowered:
            return Outcome(
                StreamState.TOO_MANY_CONNECTIONS,  # said as "another connection is still open" (states.py)
                "the tenant allows only a few event streams at once; if this lasts, close other apps or CLI "
                f"sessions following it ({text})",
                Reason.TOO_MANY_CONNECTIONS,
                busy.next_delay(),
            )
        return Outcome(StreamState.ERROR, f"access denied: the token lacks the read:events scope ({text})",
                       Reason.MISSING_SCOPE, terminal=True)  # fmt: skip
    if status == 400:
        return Outcome(StreamState.ERROR, f"the tenant refused {bad_parameter(text)}: {text}", Reason.BAD_REQUEST,
                       terminal=True)  # fmt: skip
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


def rate_limited(until: float) -> Outcome:
    """429: wait until the time the tenant named (X-RateLimit-Reset / Retry-After)."""
    shown = time.strftime("%H:%M:%S", time.localtime(until))
    return Outcome(StreamState.RATE_LIMITED, f"rate limited until {shown}", Reason.RATE_LIMITED,
                   max(0.0, until - time.time()))  # fmt: skip
