"""Keeps the live full-text index as small as the live rows, a few pages at a time while the writer is idle.

Removing a row from FTS5 (the archived rows' clean-up, archive_move.py) writes a delete marker into a new
segment; the row's own entries stay in the old segment that holds them. FTS5 drops both only when a merge
brings them together into the index's oldest segment, and its own automerge merges the newest, small segments:
the old, big ones wait for the index to grow several times over. So the live index kept what the archive took
(bench/live_disk.py: 39-78 MiB for the 26 MiB an `optimize` left, which took 2.8 s in one transaction: too long
to hold the writer).

Here: the rows removed since the last full merge are counted (`fts_removed`, in the removal's own transaction);
once they reach a MERGE_WHEN share of the live rows, the writer's idle steps merge the whole index, MERGE_PAGES
pages a transaction (sqlite.org/fts5.html, the 'merge' command). The first step (a negative page count) puts
every segment into one merge into the oldest place; the next ones (positive) carry that merge on, whatever new
segments the indexer adds meanwhile. With `usermerge` at 2 a positive step that does no work (it changes fewer
than two rows) means no merge is under way: the full merge is done, and the count starts again from what was
removed meanwhile.
"""

from __future__ import annotations

import sqlite3
import time
from typing import Final

from tenant_events.store.schema import rollback

# Pages of merged index a step writes (FTS5's pages are ~4 KB): a step holds the writer about as long as an
# indexing chunk (bench/live_disk.py lists the longest).
MERGE_PAGES: Final = 64
# A full merge starts once the rows removed since the last one reach this share of the live rows: the index
# then holds at most about that much of what left it, and merges its whole size again only after that many rows
# were moved (every few days of a 30-day live tier).
MERGE_WHEN: Final = 1 / 8
_REMOVED: Final = "fts_removed"


def note_removed(conn: sqlite3.Connection, rows: int) -> None:
    """Inside the transaction that removed `rows` rows from the full-text index."""
    if rows > 0:
        conn.execute(
            "INSERT INTO counters (name, value) VALUES (?, ?)"
            " ON CONFLICT (name) DO UPDATE SET value = value + excluded.value",
            (_REMOVED, rows),
        )


def removed(conn: sqlite3.Connection) -> int:
    """Rows removed from the full-text index since its last full merge."""
    row = conn.execute("SELECT value FROM counters WHERE name = ?", (_REMOVED,)).fetchone()
    return int(row[0]) if row else 0


def due(conn: sqlite3.Connection) -> bool:
    """Whether enough rows left the index since its last full merge to merge it whole."""
    gone = removed(conn)
    if gone <= 0:
        return False
    counters = dict(
        conn.execute("SELECT name, value FROM counters WHERE name IN ('fts_upto', 'archived_upto')")
    )
    live = int(counters.get("fts_upto", 0)) - int(counters.get("archived_upto", 0))
    return gone >= live * MERGE_WHEN


class IndexMerger:
    """The full merge's progress on one writer connection, and the longest a step held the writer."""

    def __init__(self) -> None:
        self.pending = False
        self._started: int | None = None  # the removed count when this merge began (None: not begun here)
        self.longest_step = 0.0  # seconds

    def check(self, conn: sqlite3.Connection) -> None:
        """After rows left the index (and at open): start merging when enough have."""
        self.pending = self.pending or due(conn)

    def step(self, conn: sqlite3.Connection) -> None:
        """One transaction of merging; `pending` goes False when the full merge is done."""
        started = time.perf_counter()
        conn.execute("BEGIN IMMEDIATE")
        try:
            first = self._started is None
            if first:
                conn.execute("INSERT INTO events_fts (events_fts, rank) VALUES ('usermerge', 2)")
                self._started = removed(conn)
            before = conn.total_changes
            pages = -MERGE_PAGES if first else MERGE_PAGES
            conn.execute("INSERT INTO events_fts (events_fts, rank) VALUES ('merge', ?)", (pages,))
            if conn.total_changes - before < 2:  # nothing merged: the full merge is over
                conn.execute(
                    "UPDATE counters SET value = max(0, value - ?) WHERE name = ?", (self._started, _REMOVED)
                )
                self.pending, self._started = False, None
            conn.execute("COMMIT")
        except BaseException:
            rollback(conn)
            self._started = None
            raise
        self.longest_step = max(self.longest_step, time.perf_counter() - started)
