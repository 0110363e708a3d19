"""The rows the alert rules read from the table, as row segments (only the types they read).

A `RowSegment` is `(first_seq, rows)` with rows in `EventRow`'s column order (records.py): row i has seq
`first_seq + i`; with `first_seq` None each row carries its seq in column 11 (where an EventRow has
`received_at`) and its `received_at` in column 12. The rules read them by index without building a record per row (alerts/rule_engine.py).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection
from typing import Any, Final

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


HISTORY_SEQS: Final = (
    20_000  # seqs of the history read a statement per type group (restoring the rules' state)
)


def history_start(conn: sqlite3.Connection, since_ms: int) -> int | None:
    """The lowest seq of an event that occurred at or after `since_ms` (an event delivered late has a higher seq
    than newer ones stored before it, so not the seq of the earliest such event): read from the time index."""
    row = conn.execute("SELECT min(seq) FROM events WHERE time_ms >= ?", (since_ms,)).fetchone()
    return int(row[0]) if row and row[0] is not None else None


def history_span(
    conn: sqlite3.Connection, since: dict[int, list[str]], after: int, upto: int, raw_types: Collection[str]
) -> list[tuple[Any, ...]]:
    """The events with `after < seq <= upto` of each group of types that occurred at or after the group's time
    (`since`: time ms → types), in stored order: one span of the history the rules' windows, sequences and
    novelty are refilled from. Each group is read through the type index, one statement each."""
    rows: list[tuple[Any, ...]] = []
    for since_ms, types in since.items():
        sql, params = segment_sql(
            "seq > ? AND seq <= ? AND time_ms >= ?", [after, upto, since_ms], types, raw_types
        )
        rows += conn.execute(sql, params).fetchall()
    if len(since) > 1:
        rows.sort(key=lambda r: r[11])  # (seq: column 11 of such a row)
    return rows
