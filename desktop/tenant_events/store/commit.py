"""One batch → one transaction: events, rejected frames, an optional gap marker and the cursor after them.

Runs on the writer thread (writer.py) with its connection. Everything a batch holds commits in ONE transaction,
so after a crash the stored cursor never points past a stored event nor before one that is missing. Duplicates
(same event id and time, schema.py _V2) are dropped by the UNIQUE constraint and counted.
"""

from __future__ import annotations

import functools
import sqlite3
import time
from itertools import chain
from pathlib import Path
from typing import Final

from tenant_events.errors import StorageError
from tenant_events.store import access_history, directory
from tenant_events.store.records import Batch, CommitResult, EventRow
from tenant_events.store.schema import rollback

# A batch's events go in as a few multi-row `INSERT … VALUES (…),(…)…` statements of fixed sizes (so the statement
# cache holds six plans): each is one sqlite3_step in C with the GIL released, instead of one GIL hand-off per
# row with executemany; the rows keep the stream's order as the stored order (AUTOINCREMENT seq). Measured
# cheaper than the earlier json_each(?) form, which re-serialised and re-parsed each row's raw JSON in SQLite.
# ON CONFLICT skips only a duplicate event (same time and id, schema.py _V2); OR IGNORE would also hide a NOT NULL
# violation.
_EVENT_COLUMNS: Final = (
    "event_id, stream_offset, type, family, time, time_ms, source, tenant, purpose, summary, raw, received_at"
)
# 2,000 × 12 parameters, under SQLite's 32,766: a full batch is ONE statement, so one GIL hand-back per batch
# (each waits for the engine's thread to let go of the lock, writer.py SWITCH_INTERVAL).
_CHUNK_ROWS: Final = (2000, 1000, 100, 20, 5, 1)

_INSERT_REJECTED: Final = (
    "INSERT INTO rejected (received_at, event_name, stream_offset, reason, raw) VALUES (?, ?, ?, ?, ?)"
)


@functools.cache
def _insert_events_sql(rows: int) -> str:
    values = ",".join(["(?,?,?,?,?,?,?,?,?,?,?,?)"] * rows)
    # Only constants and "?" placeholders go into the text; every value is bound.
    return f"INSERT INTO events ({_EVENT_COLUMNS}) VALUES {values} ON CONFLICT (time_ms, event_id) DO NOTHING"  # noqa: S608


def insert_events(conn: sqlite3.Connection, events: list[EventRow]) -> int | None:
    """Insert in stream order; returns the seq of the last row inserted (sqlite3_last_insert_rowid)."""
    start, total, last = 0, len(events), None
    for size in _CHUNK_ROWS:
        while total - start >= size:
            # EventRow: columns in order, flattened in C (the writer holds the interpreter lock meanwhile)
            last = conn.execute(
                _insert_events_sql(size), list(chain(*events[start : start + size]))
            ).lastrowid
            start += size
    return last


def commit_batch(conn: sqlite3.Connection, path: Path, batch: Batch, before_seq: int) -> CommitResult:
    """Write `batch` in one transaction; `before_seq` is the highest seq stored before it.

    Raises StorageError (the disk is full, the file read-only…) after rolling back."""
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            before_changes = conn.total_changes
            last_rowid = insert_events(conn, batch.events)
            inserted = conn.total_changes - before_changes
            duplicates = len(batch.events) - inserted
            # The new rows lie in before_seq+1 .. the last row inserted. Not before_seq + inserted: a skipped
            # duplicate still uses up a seq (AUTOINCREMENT). No query: each statement the writer runs is one
            # more wait for the GIL while the engine parses.
            first_seq, last_seq = (before_seq + 1, last_rowid) if inserted else (None, None)
            directory.after_batch(conn, last_seq, inserted)  # live events: into the directory now
            access_history.after_batch(conn, last_seq, inserted)  # and into the access history
            if duplicates:
                conn.execute("UPDATE counters SET value = value + ? WHERE name = 'duplicates'", (duplicates,))
            if batch.rejected:
                conn.executemany(
                    _INSERT_REJECTED,
                    [(r.received_at, r.event_name, r.offset, r.reason, r.raw) for r in batch.rejected],
                )
            if batch.gap is not None:
                g = batch.gap
                conn.execute(
                    "INSERT INTO gaps (created_at, reason, resumed_from, lost_cursor, after_seq)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (g.created_at, g.reason, g.resumed_from, g.lost_cursor, before_seq),
                )
            if batch.cursor is not None:
                conn.execute(
                    "UPDATE cursor SET stream_offset = ?, updated_at = ?,"
                    " last_event_time = CASE WHEN ? IS NOT NULL AND (last_event_time IS NULL"
                    " OR ? > last_event_time) THEN ? ELSE last_event_time END WHERE id = 1",
                    (
                        batch.cursor,
                        time.time(),
                        batch.last_event_time,
                        batch.last_event_time,
                        batch.last_event_time,
                    ),
                )
            conn.execute("COMMIT")
        except BaseException:
            rollback(conn)
            raise
    except sqlite3.OperationalError as exc:
        raise StorageError(f"cannot write to {path}: {exc}", "free disk space or check the data dir") from exc
    return CommitResult(
        inserted=inserted,
        duplicates=duplicates,
        rejected=len(batch.rejected),
        cursor=batch.cursor,
        first_seq=first_seq,
        last_seq=last_seq,
        last_event_time=batch.last_event_time,
    )
