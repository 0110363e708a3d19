"""What a tenant database takes on disk, for the proving ground: the events' own JSON next to the database file,
its full-text index and the write-ahead log (store/checkpoint.py keeps the WAL under WAL_BOUND at every moment and
empties it on a clean stop)."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path

MiB = 1024 * 1024
WAL_BOUND = 16 * MiB  # the -wal file at any moment
WAL_AFTER_STOP = 1 * MiB  # the -wal file after a clean stop


@dataclass(frozen=True)
class Disk:
    """Bytes on disk of one tenant database, next to the bytes of event JSON it holds."""

    data: int
    database: int
    fts: int
    wal: int

    @classmethod
    def of(cls, db: Path) -> Disk:
        wal = db.with_name(db.name + "-wal")
        conn = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)
        try:
            data = int(conn.execute("SELECT coalesce(sum(length(raw)), 0) FROM events").fetchone()[0])
            try:  # every page of the FTS5 index's shadow tables (dbstat is in most SQLite builds)
                query = "SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'events_fts%'"
                fts = conn.execute(query).fetchone()[0]
            except sqlite3.OperationalError:  # else its segments alone
                fts = conn.execute("SELECT sum(length(block)) FROM events_fts_data").fetchone()[0]
        finally:
            conn.close()
        return cls(data, db.stat().st_size, int(fts or 0), wal.stat().st_size if wal.exists() else 0)


class WalWatch:
    """The largest -wal file of `db`, sampled every 5 ms on a thread until stop()."""

    def __init__(self, db: Path) -> None:
        self.wal, self.largest, self._stop = db.with_name(db.name + "-wal"), 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.005):
            with contextlib.suppress(OSError):  # not there yet, or removed
                self.largest = max(self.largest, self.wal.stat().st_size)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.largest
