"""Plain records that cross the store's boundary: rows going in, rows and filters coming out.

The engine turns each validated `EventMessage` into an `EventRow` (raw JSON kept as received; the one-line
summary is worked out later, off the ingest path, by the writer's indexer or by the reader — `summary_of`) and hands a `Batch` (events + the cursor after them) to the writer, which commits it
in one transaction. The UI reads `StoredEvent`s (values/events.py) through `EventReader` with an `EventFilter`.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Final, NamedTuple

import orjson

from tenant_events.wire import EventMessage, EventType, summarize

_ZERO: Final = timedelta(0)
_NAME_FAMILY: Final = {t: (t.value, t.family) for t in EventType}


class EventRow(NamedTuple):
    """One event ready to insert; `raw` is the `data:` JSON exactly as received (its kind is in `type`).

    A NamedTuple, not a frozen dataclass: built once per event on the ingest path (a frozen dataclass's
    __init__ costs ~1 µs in object.__setattr__ calls) and bound to the INSERT as it is, in column order.
    """

    event_id: str
    offset: str
    type: str
    family: str
    time: str
    time_ms: int
    source: str
    tenant: str
    purpose: str | None
    summary: str | None
    raw: str
    received_at: float

    @classmethod
    def from_message(
        cls, message: EventMessage, raw: str, received_at: float, time_text: str | None = None
    ) -> EventRow:
        """Build the row from a validated message and its `data:` text; `time_text` is the envelope's `time` as
        received (wire.decode_frame_timed), kept as it is when already canonical."""
        env = message.event
        if time_text is not None and _is_canonical(time_text):
            text, ms = time_text, _canonical_ms(time_text)
        else:
            text, ms = _canonical(env.time)
        # Positional, in the INSERT's column order (writer.py): tuple.__new__ skips the NamedTuple's Python-level
        # __new__, measurable at 50,000 rows a second.
        return _new_row(
            cls,
            (
                env.id,
                message.offset,
                *_NAME_FAMILY[message.type],
                text,
                ms,
                env.source,
                env.xtenant,
                env.xpurpose,
                None,  # summary: filled by the indexer (writer.py) off the ingest path; readers use summary_of
                raw,
                received_at,
            ),
        )

    @classmethod
    def at_canonical_time(
        cls,
        event_id: str,
        offset: str,
        event_type: str,
        family: str,
        time_text: str,
        source: str,
        tenant: str,
        purpose: str | None,
        raw: str,
        received_at: float,
        time_ms: int | None = None,
    ) -> EventRow:
        """The row of fields already checked (stream/event_rows.py), `time_text` in the stored form
        `YYYY-MM-DDTHH:MM:SS.mmmZ` (`time_ms`: its unix milliseconds, when already worked out); ValueError when
        its day does not exist."""
        ms = _canonical_ms(time_text) if time_ms is None else time_ms
        return _new_row(
            cls,
            (
                event_id,
                offset,
                event_type,
                family,
                time_text,
                ms,
                source,
                tenant,
                purpose,
                None,
                raw,
                received_at,
            ),
        )


_new_row: Final = tuple.__new__
_EPOCH: Final = datetime(1970, 1, 1)
_MS: Final = timedelta(milliseconds=1)


def _is_canonical(text: str) -> bool:
    """`YYYY-MM-DDTHH:MM:SS.mmmZ`: UTC with milliseconds, the form stored (sorts like the time). The text was
    validated as an RFC 3339 date-time, so checking the separators is enough."""
    return len(text) == 24 and text[23] == "Z" and text[19] == "." and text[10] == "T"


def _canonical_ms(text: str) -> int:
    """Unix milliseconds of a time in the stored form; ValueError for a day that does not exist."""
    return _minute_ms(text[:16]) + int(text[17:19]) * 1000 + int(text[20:23])


@functools.lru_cache(maxsize=256)
def _minute_ms(minute: str) -> int:
    """Unix milliseconds of `YYYY-MM-DDTHH:MM` (UTC); a stream's events share minutes, hence the cache."""
    return (datetime.fromisoformat(minute) - _EPOCH) // _MS


def _canonical(moment: datetime) -> tuple[str, int]:
    """The stored text and unix milliseconds of any aware time (other offsets, other precisions)."""
    offset = moment.utcoffset() or _ZERO
    naive = moment.replace(tzinfo=None) - offset
    return naive.isoformat(timespec="milliseconds") + "Z", (naive - _EPOCH) // _MS


def summary_of(event_type: str, raw: str) -> str:
    """The table's one-line summary of a stored event, from its raw `data:` JSON; never raises."""
    try:
        kind = EventType(event_type)
        data = orjson.loads(raw)["event"]["data"]
    except (ValueError, KeyError, TypeError, orjson.JSONDecodeError):
        return event_type
    return summarize(kind, data) if isinstance(data, dict) else event_type


@dataclass(frozen=True, slots=True)
class RejectedRow:
    """A frame that failed validation, kept raw, never dropped silently (docs/event-stream.md "Message kinds")."""

    event_name: str
    offset: str | None
    reason: str
    raw: str
    received_at: float = field(default_factory=time.time)


@dataclass(frozen=True, slots=True)
class GapMarker:
    """A place where events may be missing, e.g. the cursor expired (410) and we resumed by timestamp."""

    reason: str
    resumed_from: str | None = None
    lost_cursor: str | None = None
    created_at: float = field(default_factory=time.time)


@dataclass(slots=True)
class Batch:
    """What one transaction writes: events, rejected frames, an optional gap, and the cursor after them all."""

    events: list[EventRow] = field(default_factory=list)
    rejected: list[RejectedRow] = field(default_factory=list)
    gap: GapMarker | None = None
    cursor: str | None = None
    last_event_time: str | None = None

    def __len__(self) -> int:
        return len(self.events) + len(self.rejected)

    @property
    def empty(self) -> bool:
        return not self.events and not self.rejected and self.gap is None and self.cursor is None


@dataclass(frozen=True, slots=True)
class CommitResult:
    """What a committed batch changed. Every new row's seq lies in `first_seq..last_seq` (both None when none was
    stored); a seq in that range may have no row: a skipped duplicate uses one up (AUTOINCREMENT)."""

    inserted: int
    duplicates: int
    rejected: int
    cursor: str | None
    first_seq: int | None = None
    last_seq: int | None = None
    last_event_time: str | None = None


@dataclass(frozen=True, slots=True)
class CursorState:
    """The stored resume point and the newest stored event time (for the 410 fallback)."""

    offset: str | None
    last_event_time: str | None
    updated_at: float | None


@dataclass(frozen=True, slots=True)
class StoredGap:
    id: int
    created_at: float
    reason: str
    resumed_from: str | None
    lost_cursor: str | None
    after_seq: int | None
