"""The alert rules' own connection to a tenant database, in the evaluator's process (alerts/evaluator_child.py).

The writer thread of the process that follows the stream owns the events; the rules read what it committed, by
seq, on this connection, and write their alerts and their watermark in short transactions of their own
(AlertLedger.commit: compare and set, so a second evaluator or a restart never evaluates an event twice). SQLite
serialises the two writers; each waits for the other's short transaction (busy_timeout). Every step runs on one
thread of its own, so the process's event loop stays free to hear the parent.

A database file another program removed (the -wal or -shm, checkpoint.py `FilesHeld`) ends this connection's use:
it would go on reading and writing files nobody else sees, and closing it would fold a stale log into the
database. Each step is refused with `FilesGone` before and after it, and the process ends without closing the
connection (evaluator_child.py); its parent starts another, which opens the files the writer opened again.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from tenant_events.errors import StorageError
from tenant_events.store.alerts_table import AlertLedger
from tenant_events.store.checkpoint import FilesHeld
from tenant_events.store.schema import connect

T = TypeVar("T")


class FilesGone(StorageError):
    """A file of the database was removed or replaced by another program since this connection opened it."""


class AlertConnection:
    """One connection and the one thread that uses it (the AlertJobs of alerts/runner.py)."""

    def __init__(self, path: Path) -> None:
        self._thread = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix=f"alerts-{path.stem}")
        self._conn = self._thread.submit(connect, path).result()
        self._thread.submit(self._conn.execute, "SELECT count(*) FROM sqlite_schema").result()  # files open
        self._files = FilesHeld(path)

    def run_alert_job(self, fn: Callable[[AlertLedger], T]) -> concurrent.futures.Future[T]:
        return self._thread.submit(self._job, fn)

    def _job(self, fn: Callable[[AlertLedger], T]) -> T:
        self._check()
        out = fn(AlertLedger(self._conn))
        self._check()  # (what it wrote went into a removed log: lost with its watermark, evaluated again)
        return out

    def _check(self) -> None:
        gone = self._files.gone()
        if gone is not None:
            raise FilesGone(f"{gone} is no longer the file the alert rules opened")

    def close(self) -> None:
        """After the step in flight (if any)."""
        self._thread.submit(self._conn.close).result()
        self._thread.shutdown()
