"""One bound on what SQLite holds in memory for the whole desktop process (its `PRAGMA soft_heap_limit`).

Each connection has a page cache bound of its own: 32 MB for the writer, 8 MB for each of the window's three
readers, a few for the entity and time readers. A desktop following a tenant fills them as the database grows,
about 0.7 MB a minute on the demo, towards 70 MB in all: the largest part of the window's growth after the first
half hour. Over the soft limit SQLite reuses the least recently used cached pages instead of allocating more
(sqlite.org/c3ref/hard_heap_limit64.html); the pages are still in the operating system's file cache, so a read
that misses costs a copy, not a disk read. The command line keeps the per-connection bounds it ingests with.

16 MB: at 24 MB SQLite's share still grew by ~13 MB in the demo's first half hour (bench/window_memory.py), most
of the window's growth once the heap's free pages were handed back; the writer's and readers' working sets of a
live tenant fit in 16 MB.
"""

from __future__ import annotations

import sqlite3
from typing import Final

DESKTOP_SQLITE_BYTES: Final = 16 * 2**20


def limit_sqlite_memory(limit: int = DESKTOP_SQLITE_BYTES) -> int:
    """Set the process-wide soft limit; returns the limit that was in force before (0: none)."""
    conn = sqlite3.connect(":memory:")
    try:
        before = int(conn.execute("PRAGMA soft_heap_limit").fetchone()[0])
        conn.execute(f"PRAGMA soft_heap_limit = {int(limit)}")
        return before
    finally:
        conn.close()
