"""Named engine states, the change record observers receive, and the engine's running numbers.

CONNECTING ──200──▶ CATCHING_UP ⇄ LIVE ──EOF / connection_timeout──▶ CONNECTING (at once)
    │                   │
    │                   ├─ network error, 5xx, stall ─▶ RECONNECTING (jittered backoff) ─▶ CONNECTING
    │                   └─ 410 / cursor_expired ─▶ CONNECTING with from_timestamp + gap marker
    ├─ 429 ─▶ RATE_LIMITED (until X-RateLimit-Reset / Retry-After) ─▶ CONNECTING
    ├─ 403 too many connections ─▶ TOO_MANY_CONNECTIONS (1.5-3 s, growing to 60 s) ─▶ CONNECTING
    ├─ 401 ─▶ refresh once ─▶ CONNECTING; a second 401 ─▶ SIGNED_OUT (terminal)
    └─ 400 / 403 scope / 404 / other 4xx ─▶ ERROR (terminal, message names the cause)
pause() ─▶ PAUSED ─resume()─▶ CONNECTING;  stop() ─▶ STOPPED (terminal)

`state_line()` is the one place a state and its message become words for a person (the CLI's stderr, the
window's status bar and tray): the state, when the next attempt comes, then why — each said once. The line is
escaped again there (server_text.py): a message that quotes a server can never move the cursor or split it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import StrEnum

from tenant_events.server_text import shown


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


# What a person calls each state; a message that starts with these words is shown alone (it says them already).
LABELS: dict[StreamState, str] = {
    StreamState.CONNECTING: "connecting",
    StreamState.CATCHING_UP: "catching up",
    StreamState.LIVE: "live",
    StreamState.RECONNECTING: "reconnecting",
    StreamState.RATE_LIMITED: "rate limited",
    StreamState.TOO_MANY_CONNECTIONS: "another connection is still open",
    StreamState.PAUSED: "paused",
    StreamState.SIGNED_OUT: "signed out",
    StreamState.ERROR: "error",
    StreamState.STOPPED: "stopped",
}


def describe(label: str, detail: str) -> str:
    """`label — detail`, but the detail alone when it starts with the label's words ("signed out of demo: sign
    in again"), and the label alone when there is no detail or it only repeats the label ("stopped")."""
    detail = detail.strip()
    if not detail or detail.lower() == label.lower():
        return label
    if detail.lower().startswith(label.lower()):
        return detail
    return f"{label} — {detail}"


def state_line(change: StateChange, now: float | None = None) -> str:
    """One line for a person (see `_state_line`), control characters escaped."""
    return shown(_state_line(change, now), None)


def _state_line(change: StateChange, now: float | None = None) -> str:
    """One line for a person: "reconnecting in 4 s — network error: …", "rate limited until 12:04:10", "live".

    The wait comes from `retry_at` (so a line rendered again later counts down); a rate limit's message names
    the time it lifts instead."""
    now = time.time() if now is None else now
    label = LABELS[change.state]
    wait = change.retry_at - now if change.retry_at is not None else 0.0
    if wait <= 0 or change.state is StreamState.RATE_LIMITED:
        return describe(label, change.message)
    seconds = f"{max(1, round(wait))} s"
    detail = change.message.strip()
    if detail.lower().startswith(label.lower()):  # the wait goes between the state's words and the rest
        detail = detail[len(label) :].lstrip(" :;,—-")
    if change.state is StreamState.RECONNECTING:
        head = f"reconnecting in {seconds}"
    else:
        head = f"{label} — retrying in {seconds}"
    return f"{head} — {detail}" if detail else head


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
