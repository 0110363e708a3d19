"""Copies a tenant database's write-ahead log into the database file on a thread of its own.

Why: the writer's automatic checkpoint copied 64 MiB at a time on the writer thread, a few hundred ms in which
no batch committed; while catching up the engine then waited for the writer (measured: a 200,000-event catch-up
ran ~50k events/s with those checkpoints and ~55k without any). A PASSIVE checkpoint on another connection runs
beside the writer's commits (sqlite.org/wal.html "Checkpointing"), on the core the engine is not using.

The WAL can only start again from its beginning once every frame is copied, which a checkpoint racing a busy
writer may never see; so past `hard_limit_bytes` the writer copies the last few frames itself
(`StoreWriter._after_commit`). Durability is unchanged: a commit is in the WAL (synchronous=NORMAL) whether or
not it has been copied yet.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path

from tenant_events.store.schema import connect

log = logging.getLogger(__name__)


class WalCheckpointer:
    """Runs `PRAGMA wal_checkpoint(PASSIVE)` whenever asked, one at a time, until closed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.runs = 0  # checkpoints done (tests, stats)
        self._wake = threading.Event()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name=f"store-checkpoint-{path.stem}", daemon=True)
        self._thread.start()

    def request(self) -> None:
        """Checkpoint soon (requests while one runs fold into one more run)."""
        self._wake.set()

    def close(self) -> None:
        self._stopping = True
        self._wake.set()
        self._thread.join()

    def _run(self) -> None:
        conn: sqlite3.Connection | None = None
        try:
            while True:
                self._wake.wait()
                self._wake.clear()
                if self._stopping:
                    return
                try:
                    if conn is None:
                        conn = connect(self.path)
                        # A checkpoint copies WAL frames straight into the file; it needs no page cache of its own
                        # (connect() gives every connection 31 MiB, which this one would only fill).
                        conn.execute("PRAGMA cache_size = -1024")
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                    self.runs += 1
                except sqlite3.Error as exc:
                    # Not fatal: the frames stay in the WAL (durable) and the writer copies them past its limit.
                    log.warning("background checkpoint of %s failed: %s", self.path.name, exc)
        finally:
            if conn is not None:
                conn.close()
