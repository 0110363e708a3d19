"""The rows the alert rules read: the writer's recent batches in memory, or the table, as row segments.

A `RowSegment` is `(first_seq, rows)` with rows in `EventRow`'s column order (records.py): row i has seq
`first_seq + i`; with `first_seq` None each row carries its seq in column 11 (where an EventRow has
`received_at`) and its `received_at` in column 12. The rules read them by index without building a record per row (alerts/rule_engine.py).
"""

from __future__ import annotations

import sqlite3
from collections import deque
from collections.abc import Collection
from typing import Final

from tenant_events.store.alert_records import RowSegment
from tenant_events.store.records import EventRow

RECENT_ROWS: Final = 4000  # rows of recent batches the writer keeps for the rules (~5 MB of raw JSON)
_COLUMNS: Final = (
    "event_id, NULL, type, NULL, time, time_ms, NULL, tenant, purpose, NULL, {raw}, seq, received_at"
)


def segment_sql(
    where: str,
    where_params: list[object],
    types: Collection[str] | None,
    raw_types: Collection[str],
    order: str = "seq",
    source: str = "events",
) -> tuple[str, list[object]]:
    """SELECT of RowSegment rows (seq last) under `where` (types: None = all), raw JSON only for `raw_types`;
    `order` is a constant ORDER BY list, `source` the table (with the index to walk), never user text. Given a
    `source` index, the types are tested on its rows (`+type`) instead of being looked up by the type index."""
    raw = f"CASE WHEN type IN ({','.join('?' * len(raw_types))}) THEN raw END" if raw_types else "NULL"
    sql = f"SELECT {_COLUMNS.format(raw=raw)} FROM {source} WHERE {where}"  # noqa: S608
    if types is not None:
        sql += f" AND {'type' if source == 'events' else '+type'} IN ({','.join('?' * len(types))})"
    return f"{sql} ORDER BY {order}", [*sorted(raw_types), *where_params, *sorted(types or ())]


def event_at(conn: sqlite3.Connection, seq: int) -> tuple[str, int] | None:
    """(event id, time ms) of the newest stored event at or before `seq`: where an evaluation stands, as another
    copy of the same stream (a team relay's) can find it."""
    row = conn.execute(
        "SELECT event_id, time_ms FROM events WHERE seq <= ? ORDER BY seq DESC LIMIT 1", (seq,)
    ).fetchone()
    return (str(row[0]), int(row[1])) if row else None


class RecentRows:
    """The rows of the last few batches committed without duplicates, kept by the writer (its thread only).

    The rules evaluate each batch right after its commit; reading it back from the table cost ~1.4 µs a row (wide
    rows: about three to a page), more than all the rules together. A batch without a skipped duplicate holds
    consecutive seqs ending at the last inserted rowid, so its in-memory rows are exactly the committed rows.
    """

    def __init__(self, max_rows: int = RECENT_ROWS) -> None:
        self.max_rows = max_rows
        self._batches: deque[tuple[int, list[EventRow]]] = deque()
        self._rows = 0

    def add(self, first_seq: int, rows: list[EventRow]) -> None:
        self._batches.append((first_seq, rows))
        self._rows += len(rows)
        while self._rows > self.max_rows and len(self._batches) > 1:
            self._rows -= len(self._batches.popleft()[1])

    @property
    def held(self) -> int:
        """How many rows are held."""
        return self._rows

    def segments(self, after: int, upto: int) -> list[RowSegment] | None:
        """Segments covering every seq in `after < seq <= upto`, or None when one is not held here.

        Batches that end at or before `after` are let go: the rules read forward from their watermark, so they are
        not asked for again (a reader that does gets None and reads the table). Without this a quiet tenant's
        desktop kept its last RECENT_ROWS rows, some 8 MB of raw JSON, long after the rules had read them."""
        batches = self._batches
        while batches and batches[0][0] + len(batches[0][1]) <= after + 1:
            self._rows -= len(batches.popleft()[1])
        out: list[RowSegment] = []
        expect = after + 1
        for first, rows in self._batches:
            if first + len(rows) <= expect:
                continue
            if first > expect:
                return None
            start, stop = expect - first, min(len(rows), upto - first + 1)
            out.append((expect, rows[start:stop] if start or stop < len(rows) else rows))
            expect = first + stop
            if expect > upto:
                return out
        return out if expect > upto else None
