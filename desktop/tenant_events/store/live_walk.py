"""The live table's side of `EventReader` (reader.py): matching rows in seq order and full-text counts.

Each function runs on the caller's connection inside the caller's read transaction, so the full-text index's
watermark (`fts_upto`) and the archive's (`archived_upto`) hold still for it.
"""

from __future__ import annotations

import sqlite3
from typing import Any, Final

from tenant_events.store.query import Walk, walk_plan, where_clause
from tenant_events.store.records import summary_of
from tenant_events.values.events import EventFilter, StoredEvent

COLUMNS: Final = (
    "seq, event_id, stream_offset, type, family, time, source, tenant, purpose, summary, received_at,"
    " CASE WHEN summary IS NULL THEN raw END"
)
NO_SEQ: Final = 2**63 - 1  # above every seq
NO_LOW: Final = -(2**62)  # below every seq (a team archive's rows are numbered below 0: archive_lake.py)


def event_of(row: tuple[object, ...], raw: str | None = None) -> StoredEvent:
    """A StoredEvent from a `COLUMNS` row; a row the indexer has not reached yet gets its summary made here."""
    values = list(row[:11])
    if values[9] is None:
        values[9] = summary_of(str(values[3]), str(row[11]))
    return StoredEvent(*values, raw=raw)  # type: ignore[arg-type, misc]


def fts_upto(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT value FROM counters WHERE name = 'fts_upto'").fetchone()[0])


def count_text(
    conn: sqlite3.Connection,
    match: str,
    tail_where: tuple[str, list[object]],
    low: int,
    high: int,
    archived_upto: int,
) -> int:
    """Text only: count in the FTS index itself plus the unindexed tail (~10× faster than looking up every
    matching row). Only above `archived_upto`: the index may still hold rows that moved to the archive."""
    tail, tail_params = tail_where
    upto = fts_upto(conn)
    indexed = conn.execute(
        "SELECT count(*) FROM events_fts WHERE events_fts MATCH ? AND rowid BETWEEN ? AND ?",
        (match, max(low, archived_upto + 1), min(high, upto)),
    ).fetchone()[0]
    recent = conn.execute(
        f"SELECT count(*) FROM events WHERE seq BETWEEN ? AND ? AND {tail}",  # noqa: S608
        [max(low, upto + 1), high, *tail_params],
    ).fetchone()[0]
    return int(indexed) + int(recent)


def walk(
    conn: sqlite3.Connection,
    f: EventFilter,
    low: int,
    high: int,
    limit: int,
    newest_first: bool,
    raw: bool = False,
) -> list[StoredEvent]:
    """Up to `limit` matching events with `low < seq < high`, in seq order either way. With free text or a
    query that gives an FTS expression, without building the set of all matches: the FTS index is walked by
    rowid (FTS5 streams `ORDER BY rowid`), each hit joined to its row and checked against the rest of the
    filter, stopping at `limit`; the unindexed tail (the newest rows) is scanned on its own. `raw`: with the
    stored JSON."""
    order = "DESC" if newest_first else "ASC"
    columns = f"{COLUMNS}, raw" if raw else COLUMNS
    upto = fts_upto(conn)
    plan = walk_plan(f, upto)
    rows: list[Any]
    if plan is None:
        where, params = where_clause(f, upto, narrow=False)
        rows = conn.execute(
            f"SELECT {columns} FROM events WHERE seq > ? AND seq < ? AND {where}"  # noqa: S608
            f" ORDER BY seq {order} LIMIT ?",
            [low, high, *params, limit],
        ).fetchall()
    elif newest_first:
        rows = _tail(conn, plan, columns, max(low, upto), high, limit, order)
        if len(rows) < limit:
            rows += _hits(conn, plan, columns, low, min(high, upto + 1), limit - len(rows), order)
    else:
        rows = _hits(conn, plan, columns, low, min(high, upto + 1), limit, order)
        if len(rows) < limit:
            rows += _tail(conn, plan, columns, max(low, upto), high, limit - len(rows), order)
    return [event_of(r[:-1], str(r[-1])) if raw else event_of(r) for r in rows]


def _tail(
    conn: sqlite3.Connection, plan: Walk, columns: str, low: int, high: int, limit: int, order: str
) -> list[Any]:
    where, params = plan.tail
    return conn.execute(
        f"SELECT {columns} FROM events WHERE seq > ? AND seq < ? AND {where} ORDER BY seq {order} LIMIT ?",  # noqa: S608
        [low, high, *params, limit],
    ).fetchall()


def _hits(
    conn: sqlite3.Connection, plan: Walk, columns: str, low: int, high: int, limit: int, order: str
) -> list[Any]:
    if high <= low + 1:
        return []
    where, params = plan.rest
    return conn.execute(
        f"SELECT {columns} FROM (SELECT rowid AS hit FROM events_fts"  # noqa: S608
        f" WHERE events_fts MATCH ? AND rowid > ? AND rowid < ? ORDER BY rowid {order}) CROSS JOIN events"
        f" ON seq = hit WHERE {where} ORDER BY hit {order} LIMIT ?",
        [plan.match, low, high, *params, limit],
    ).fetchall()
