"""Summaries and the full-text index, filled in behind ingest a chunk at a time, with what a catch-up left of
the entity directory (directory.py) and the access history (access_history.py).

The writer thread (writer.py) runs a chunk whenever no batch has arrived for `IDLE_BEFORE_INDEXING` seconds and
goes on chunk after chunk until a batch arrives, so indexing never slows ingest; `EventReader` summarises and
searches the not-yet-indexed tail itself. The `fts_upto` counter is the highest seq indexed.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from typing import Final

from tenant_events.store import access_history, directory
from tenant_events.store.fts_text import FTS_INSERT, indexed_raw
from tenant_events.store.records import summary_of
from tenant_events.store.schema import rollback

log = logging.getLogger(__name__)
FTS_CHUNK: Final = 500
# Seconds without a batch before the indexer starts; once started it goes on chunk after chunk until a batch
# arrives. A catch-up delivers a batch every few ms, so indexing (summaries in Python, FTS in SQLite) waits
# for it to end instead of taking the GIL from the ingest path.
IDLE_BEFORE_INDEXING: Final = 0.5
# ... but never less often than this while rows wait: steady live traffic (events, heartbeats and the alert rules'
# jobs more often than IDLE_BEFORE_INDEXING) would otherwise keep it waiting for good. A chunk takes 30-45 ms
# (on a loaded machine), so one every 2 s costs a catch-up about 2 %.
INDEX_AT_LEAST_EVERY: Final = 2.0


def counter(conn: sqlite3.Connection, name: str) -> int:
    return int(conn.execute("SELECT value FROM counters WHERE name = ?", (name,)).fetchone()[0])


def max_seq(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'events'").fetchone()
    return int(row[0]) if row else 0


def backlog(conn: sqlite3.Connection) -> int:
    """Rows stored but not yet indexed (in the full-text index, or in the access history)."""
    return max(max_seq(conn) - counter(conn, "fts_upto"), access_history.backlog(conn))


def index_chunk(conn: sqlite3.Connection) -> int:
    """Fill the summaries of the next FTS_CHUNK rows and add them to the full-text index, one transaction.

    Returns how many rows it indexed: FTS_CHUNK means there may be more (rows, or a backlog of the access
    history, which a migration leaves for this to fill)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        upto = counter(conn, "fts_upto")
        rows = conn.execute(
            "SELECT seq, event_id, type, summary, raw FROM events WHERE seq > ? ORDER BY seq LIMIT ?",
            (upto, FTS_CHUNK),
        ).fetchall()
        indexed = [(seq, eid, summary or summary_of(kind, raw), raw) for seq, eid, kind, summary, raw in rows]
        if indexed:
            conn.executemany(
                "UPDATE events SET summary = ? WHERE seq = ? AND summary IS NULL",
                [(r[2], r[0]) for r in indexed],
            )
            conn.executemany(
                FTS_INSERT,
                [(seq, eid, summary, indexed_raw(raw)) for seq, eid, summary, raw in indexed],
            )
            upto = indexed[-1][0]
        else:
            upto = max(upto, max_seq(conn))
        directory.catch_up(conn, upto)  # what after_batch left for now (catch-ups)
        history_behind = access_history.catch_up(conn, upto)
        conn.execute("UPDATE counters SET value = ? WHERE name = 'fts_upto'", (upto,))
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise
    return FTS_CHUNK if history_behind else len(rows)


def gives_way(tests: list[Callable[[], bool]], name: str) -> bool:
    """Whether the writer's idle work waits now: one of `tests` (StoreWriter.idle_waits_for, handed down by the
    monitor) says so, e.g. the alert rules' process is catching up with what was stored (alerts/evaluator_process.py):
    the idle work then takes one chunk every INDEX_AT_LEAST_EVERY only, and is looked at again after
    IDLE_BEFORE_INDEXING. A test that fails is logged and dropped, never raised on the writer's thread."""
    for test in tests:
        try:
            if test():
                return True
        except Exception:
            log.exception("%s: indexing no longer waits for a test that failed", name)
            tests.remove(test)
            return False
    return False
