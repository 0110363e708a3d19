"""Named engine states, the change record observers receive, and the engine's running numbers.

CONNECTING ──200──▶ CATCHING_UP ⇄ LIVE ──EOF / connection_timeout──▶ CONNECTING (at once)
    │                   │
    │                   ├─ network error, 5xx, stall ─▶ RECONNECTING (jittered backoff) ─▶ CONNECTING
    │                   └─ 410 / cursor_expired ─▶ CONNECTING with from_timestamp + gap marker
    ├─ 429 ─▶ RATE_LIMITED (until X-RateLimit-Reset / Retry-After) ─▶ CONNECTING
    ├─ 403 too many connections ─▶ TOO_MANY_CONNECTIONS (long backoff) ─▶ CONNECTING
    ├─ 401 ─▶ refresh once ─▶ CONNECTING; a second 401 ─▶ SIGNED_OUT (terminal)
    └─ 400 / 403 scope / 404 / other 4xx ─▶ ERROR (terminal, message names the cause)
pause() ─▶ PAUSED ─resume()─▶ CONNECTING;  stop() ─▶ STOPPED (terminal)
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import StrEnum


class StreamState(StrEnum):
    CONNECTING = "connecting"
    CATCHING_UP = "catching up"
    LIVE = "live"
    RECONNECTING = "reconnecting"
    RATE_LIMITED = "rate limited"
    TOO_MANY_CONNECTIONS = "too many connections"
    PAUSED = "paused"
    SIGNED_OUT = "signed out"
    ERROR = "error"
    STOPPED = "stopped"

    @property
    def terminal(self) -> bool:
        """The engine's run() returns after a terminal state; restart it (after fixing the cause) to go on."""
        return self in (StreamState.SIGNED_OUT, StreamState.ERROR, StreamState.STOPPED)


@dataclass(frozen=True, slots=True)
class StateChange:
    """A state with the human message to show and a machine `reason`; `retry_at` (epoch s) when waiting."""

    state: StreamState
    message: str
    reason: str = ""
    retry_at: float | None = None
    at: float = field(default_factory=time.time)


@dataclass(slots=True)
class EngineStats:
    """Running numbers of one engine (since it started, except the store's cumulative duplicates)."""

    events_stored: int = 0
    duplicates_dropped: int = 0
    rejected: int = 0
    reconnects: int = 0
    events_per_second: float = 0.0
    last_event_time: str | None = None
    cursor_updated_at: float | None = None

    @property
    def cursor_age(self) -> float | None:
        """Seconds since the stored cursor last moved."""
        return None if self.cursor_updated_at is None else max(0.0, time.time() - self.cursor_updated_at)
