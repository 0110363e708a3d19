"""Retention: deletes the oldest events in small chunks, each its own transaction.

Chunks keep every transaction short, so a reader or the next batch never waits long; the writer (writer.py)
runs one chunk per job until a chunk comes back short. Rows already in the full-text index leave it too.
"""

from __future__ import annotations

import sqlite3
import time
from typing import Final

from tenant_events.store.indexer import counter
from tenant_events.store.schema import rollback

RETENTION_CHUNK: Final = 2000


def retention_chunk(conn: sqlite3.Connection, max_age_days: float | None, max_rows: int | None) -> int:
    """Delete up to RETENTION_CHUNK events older than `max_age_days` or beyond the newest `max_rows`."""
    seqs: list[int] = []
    if max_age_days is not None:
        cutoff_ms = int((time.time() - max_age_days * 86400) * 1000)
        seqs = [
            r[0]
            for r in conn.execute(
                "SELECT seq FROM events WHERE time_ms < ? LIMIT ?", (cutoff_ms, RETENTION_CHUNK)
            )
        ]
    if max_rows is not None and len(seqs) < RETENTION_CHUNK:
        excess = int(conn.execute("SELECT count(*) FROM events").fetchone()[0]) - len(seqs) - max_rows
        if excess > 0:
            seqs += [
                r[0]
                for r in conn.execute(
                    "SELECT seq FROM events WHERE seq NOT IN (SELECT value FROM json_each(?)) ORDER BY seq LIMIT ?",
                    (str(seqs), min(excess, RETENTION_CHUNK - len(seqs))),
                )
            ]
    if not seqs:
        return 0
    conn.execute("BEGIN IMMEDIATE")
    try:
        upto = counter(conn, "fts_upto")
        ids = str(seqs)
        conn.execute(
            "INSERT INTO events_fts (events_fts, rowid, event_id, summary, raw)"
            " SELECT 'delete', seq, event_id, summary, raw FROM events"
            " WHERE seq IN (SELECT value FROM json_each(?)) AND seq <= ?",
            (ids, upto),
        )
        conn.execute("DELETE FROM events WHERE seq IN (SELECT value FROM json_each(?))", (ids,))
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise
    return len(seqs)
