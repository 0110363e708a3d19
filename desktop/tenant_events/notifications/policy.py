"""Which stored events become desktop notifications, and how bursts collapse (Qt-free, unit-tested).

Rules:
  * only the chosen types notify (default: deletions and role changes, `DEFAULT_TYPES`);
  * nothing while paused, during do-not-disturb (DND expires by wall clock) or in the quiet hours (local
    wall time, e.g. 22:00–07:00 spans midnight; settings.NotificationSettings.quiet_hours);
  * events collect for `window_s`; one event gives one notification that can open it, several give
    "23 × user.created in 10 s" (or a per-type tally when mixed);
  * events older than `backlog_age_s` when they arrive (catching up after sleep) give one summary
    ("Caught up: 120 events while away"), never a flood.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from datetime import time as wall_time

from tenant_events.wire import EventType

DEFAULT_TYPES: frozenset[str] = frozenset(
    t.value for t in EventType if t.value.endswith(".deleted") or t.value.endswith(".removed")
) | frozenset(t.value for t in EventType if ".role." in t.value)


@dataclass(frozen=True, slots=True)
class Candidate:
    """The part of a stored event the policy needs."""

    tenant: str
    seq: int
    event_id: str
    type: str
    time: str  # ISO 8601 (the envelope's `time`, docs/event-stream.md "Envelope")
    summary: str


@dataclass(frozen=True, slots=True)
class Outgoing:
    """One notification to show; `target` is the event to open on click (None for summaries)."""

    title: str
    body: str
    target: Candidate | None = None
    urgent: bool = False


@dataclass
class NotifyPolicy:
    types: set[str] = field(default_factory=lambda: set(DEFAULT_TYPES))
    window_s: float = 2.0
    backlog_age_s: float = 300.0
    dnd_until: float = 0.0
    paused: bool = False
    quiet_hours: tuple[str, str] | None = None  # ("22:00", "07:00"), local wall time; start == end: never
    clock: Callable[[], float] = time.time
    _pending: list[Candidate] = field(default_factory=list)
    _backlog: Counter[str] = field(default_factory=Counter)
    _first_at: float | None = None

    @property
    def dnd_active(self) -> bool:
        return self.clock() < self.dnd_until

    @property
    def quiet_now(self) -> bool:
        """Inside the quiet hours at `clock()` (local time); the start is inside, the end is not."""
        if self.quiet_hours is None:
            return False
        start, end = (wall_time.fromisoformat(t) for t in self.quiet_hours)
        now = datetime.fromtimestamp(self.clock()).time()
        if start <= end:
            return start <= now < end
        return now >= start or now < end  # spans midnight

    @property
    def muted(self) -> bool:
        """Nothing notifies now: paused, do-not-disturb or quiet hours (events are still stored)."""
        return self.paused or self.dnd_active or self.quiet_now

    def offer(self, events: Iterable[Candidate]) -> bool:
        """Queue the events that should notify; True when a flush is now due within `window_s`."""
        if self.muted:
            return False
        now = self.clock()
        for ev in events:
            if ev.type not in self.types:
                continue
            if now - _epoch(ev.time) > self.backlog_age_s:
                self._backlog[ev.type] += 1
                continue
            self._pending.append(ev)
        if (self._pending or self._backlog) and self._first_at is None:
            self._first_at = now
            return True
        return False

    def flush(self) -> list[Outgoing]:
        """The notifications for everything queued since the last flush (at most two)."""
        out: list[Outgoing] = []
        span = max(1, round(self.clock() - (self._first_at or self.clock()) + self.window_s))
        if self._backlog:
            total = sum(self._backlog.values())
            out.append(Outgoing(f"Caught up: {total:,} events while away", _tally(self._backlog)))
        pending = self._pending
        if len(pending) == 1:
            ev = pending[0]
            out.append(Outgoing(ev.type, f"{ev.summary}\n{ev.tenant}", target=ev, urgent=True))
        elif pending:
            counts = Counter(ev.type for ev in pending)
            if len(counts) == 1:
                title = f"{len(pending)} × {pending[0].type} in {span} s"
                out.append(Outgoing(title, f"Latest: {pending[-1].summary}", target=pending[-1]))
            else:
                out.append(Outgoing(f"{len(pending)} events in {span} s", _tally(counts), target=pending[-1]))
        self._pending, self._backlog, self._first_at = [], Counter(), None
        return out


def _tally(counts: Counter[str]) -> str:
    parts = [f"{n} × {t}" for t, n in counts.most_common(4)]
    rest = sum(counts.values()) - sum(n for _, n in counts.most_common(4))
    return ", ".join(parts) + (f", {rest} more" if rest else "")


def _epoch(iso: str) -> float:
    try:
        return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return time.time()
