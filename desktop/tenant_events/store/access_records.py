"""Plain records of the access history as readers get it: spans of links, how far the history reaches, the
possible gaps in it, and the facts of the events that began or ended a span.

A reader of another tier (an archive of old events) hands out the same records, so the access review
(access/review.py) reads any tier through one interface (access/source.py). Stamps are the directory's
(`time_ms << 20 | seq`, store/directory.py); times are unix milliseconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tenant_events.store.entity_records import Relation, stamp_ms


@dataclass(frozen=True, slots=True)
class LinkSpan:
    """One span of time a link held: [since, until) in stamps, until None while it still holds; since 0 (and
    since_seq 0) when it began before the first stored event."""

    relation: Relation
    ids: tuple[str, ...]  # the ends' ids in the relation's order (store/entity_state.py ENDS)
    since: int
    since_seq: int
    until: int | None = None
    until_seq: int | None = None

    @property
    def since_ms(self) -> int | None:
        """None: it began before the first stored event (its removal is stored, its grant is not)."""
        return None if self.since == 0 else self.since >> 20

    @property
    def until_ms(self) -> int | None:
        return stamp_ms(self.until)


@dataclass(frozen=True, slots=True)
class GapWindow:
    """A possible gap (the stream's cursor expired and it resumed by time): events from `start_ms` to `end_ms`
    may be missing for good. `end_ms` None: no event was stored after it yet."""

    reason: str
    start_ms: int
    end_ms: int | None
    noted_at: float  # when the gap was found (unix seconds)

    def overlaps(self, low_ms: int, high_ms: int) -> bool:
        return self.start_ms <= high_ms and (self.end_ms is None or self.end_ms >= low_ms)


@dataclass(frozen=True, slots=True)
class HistoryReach:
    """How far the history reaches: complete (but for gaps) from `first_ms`, the first stored event it took in,
    up to stored event `upto_seq` of `stored_seq`; `newest_ms` is the newest event time it holds."""

    first_ms: int | None
    newest_ms: int | None
    upto_seq: int
    stored_seq: int
    gaps: tuple[GapWindow, ...] = ()

    @property
    def behind(self) -> int:
        """Stored events not in the history yet (being indexed)."""
        return max(0, self.stored_seq - self.upto_seq)


@dataclass(frozen=True, slots=True)
class HeldAt:
    """The links that held at one moment (a stamp), and the history's reach when they were read."""

    moment: int
    spans: tuple[LinkSpan, ...]
    reach: HistoryReach


@dataclass(frozen=True, slots=True)
class EventFacts:
    """What the review shows of the event that began or ended a span: its id, type, time and `data`."""

    seq: int
    event_id: str
    type: str
    time_ms: int
    data: dict[str, Any]
