"""Stored events by event time over both tiers, oldest first: what a rule is tried and backtested on
(alerts/history.py), as row segments (alert_rows.py: each row carries its seq in column 11).

    one read transaction ─┬─ the archive's catalog ─▶ each month's files, by time (DuckDB) ─┐
                          └─ the live rows above it, by time (SQLite) ───────────────────────┴─▶ merged by time

The catalog and the live rows are read in ONE SQLite read transaction (archive_catalog.py), so each event is read
exactly once whatever the mover does meanwhile; a file it drops from the catalog stays on disk for a grace period.
A file holds one month of event time, so the months are read one after another, each sorted by DuckDB; the live
tier starts inside the archive's newest month, and the two are merged only where they overlap. Only rows of the
rules' types are read, their raw JSON only where a rule reads it, and every table is read once: the earlier read
took the rows a chunk at a time past a time keyset the type index cannot serve, so each chunk sorted every row
left (a million events: minutes per rule).
"""

from __future__ import annotations

import heapq
import sqlite3
from collections.abc import Collection, Iterator, Sequence
from itertools import chain
from pathlib import Path
from typing import Any, Final

from tenant_events.store import archive_catalog, duck
from tenant_events.store.alert_records import RowSegment
from tenant_events.store.alert_rows import segment_sql
from tenant_events.store.archive_catalog import ArchiveFile, ArchiveSnapshot
from tenant_events.store.archive_layout import canonical_time, folder_of
from tenant_events.store.archive_reader import ArchiveReader

CHUNK: Final = 5000  # rows per segment
WALK_SHARE: Final = 8  # see _live_source
TIME_WALK: Final = "events INDEXED BY events_time_id"
Row = tuple[Any, ...]


def rows_by_time(
    conn: sqlite3.Connection,
    path: Path,
    since_ms: int,
    until_ms: int,
    types: Collection[str] | None,
    raw_types: Collection[str],
) -> Iterator[RowSegment]:
    """Events with `since_ms <= time < until_ms` of `types` (None: all), oldest first (by time, then event id);
    raw JSON only for `raw_types`. Holds a read transaction on `conn` until exhausted or closed."""
    conn.execute("BEGIN")
    cursor = conn.cursor()
    try:
        snap = archive_catalog.snapshot(conn)
        sql, params = segment_sql(
            "seq > ? AND time_ms >= ? AND time_ms < ?",
            [snap.upto, since_ms, until_ms],
            types,
            raw_types,
            order="time_ms, event_id",
            source=_live_source(conn, snap.upto, since_ms, until_ms, types),
        )
        cursor.execute(sql, params)
        live = iter(lambda: cursor.fetchmany(CHUNK), [])
        files = [f for f in snap.files if f.last_ms >= since_ms and f.first_ms < until_ms]
        if not files:
            yield from ((None, rows) for rows in live)
            return
        reader = ArchiveReader(folder_of(path))
        try:
            archived = _archived(reader, reader.use(snap), files, since_ms, until_ms, types, raw_types)
            yield from _merged(archived, live)
        finally:
            reader.close()
    finally:
        cursor.close()  # (a statement left unfinished when the caller stops early)
        if conn.in_transaction:
            conn.execute("COMMIT")


def _live_source(
    conn: sqlite3.Connection, upto: int, since_ms: int, until_ms: int, types: Collection[str] | None
) -> str:
    """Walk the time index over the period when that reads fewer rows than WALK_SHARE times the rows of the
    rules' types (every row read in time order, nothing sorted); else look those up by the type index and sort
    them (a rare type over a long period). Both counts come from an index alone."""
    if types is None:
        return TIME_WALK
    marks = ",".join("?" * len(types))
    wanted = conn.execute(
        f"SELECT count(*) FROM events WHERE type IN ({marks}) AND seq > ?",  # noqa: S608
        [*types, upto],
    ).fetchone()[0]
    period = conn.execute(
        f"SELECT count(*) FROM {TIME_WALK} WHERE time_ms >= ? AND time_ms < ? AND seq > ?",  # noqa: S608
        (since_ms, until_ms, upto),
    ).fetchone()[0]
    return TIME_WALK if period <= wanted * WALK_SHARE else "events"


def _archived(
    reader: ArchiveReader,
    snap: ArchiveSnapshot,
    files: Sequence[ArchiveFile],
    since_ms: int,
    until_ms: int,
    types: Collection[str] | None,
    raw_types: Collection[str],
) -> Iterator[list[Row]]:
    """The archived rows, a month at a time (its files hold no other month's events), each sorted by time."""
    months: dict[str, list[ArchiveFile]] = {}
    for f in files:
        months.setdefault(f.month, []).append(f)
    raw = f"CASE WHEN type IN ({_in(raw_types)}) THEN raw END" if raw_types else "NULL"
    where = f"time_ms >= {int(since_ms)} AND time_ms < {int(until_ms)} AND seq <= {int(snap.upto)}"
    if types is not None:
        where += f" AND type IN ({_in(types)})" if types else " AND false"
    select = (
        f"event_id, NULL, type, NULL, time, time_ms, NULL, tenant, purpose, NULL, {raw}, seq, received_at"
    )
    for month in sorted(months):
        for rows in reader.chunks(months[month], select, where, "ORDER BY time_ms, event_id", CHUNK):
            yield [r if r[4] is not None else (*r[:4], canonical_time(r[5]), *r[5:]) for r in rows]


def _in(values: Collection[str]) -> str:
    return ", ".join(duck.literal(v) for v in sorted(values))


def _merged(archived: Iterator[list[Row]], live: Iterator[list[Row]]) -> Iterator[RowSegment]:
    """Both sorted streams as one, chunk by chunk; row by row only from where they overlap (the live tier's
    oldest row, usually inside the archive's newest month)."""
    first_live = next(live, None)
    if first_live is None:
        yield from ((None, rows) for rows in archived)
        return
    start = (first_live[0][5], first_live[0][0])
    for rows in archived:
        if (rows[-1][5], rows[-1][0]) < start:
            yield None, rows
            continue
        overlap = heapq.merge(
            chain(rows, chain.from_iterable(archived)),
            chain(first_live, chain.from_iterable(live)),
            key=lambda r: (r[5], r[0]),
        )
        while batch := [r for _, r in zip(range(CHUNK), overlap, strict=False)]:
            yield None, batch
        return
    yield None, first_live
    yield from ((None, rows) for rows in live)
