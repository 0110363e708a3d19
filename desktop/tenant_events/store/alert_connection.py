"""The alert rules' own connection to a tenant database, in the evaluator's process (alerts/evaluator_child.py).

The writer thread of the process that follows the stream owns the events; the rules read what it committed, by
seq, on this connection, and write their alerts and their watermark in short transactions of their own
(AlertLedger.commit: compare and set, so a second evaluator or a restart never evaluates an event twice). SQLite
serialises the two writers; each waits for the other's short transaction (busy_timeout). Every step runs on one
thread of its own, so the process's event loop stays free to hear the parent.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from tenant_events.store.alerts_table import AlertLedger
from tenant_events.store.schema import connect

T = TypeVar("T")


class AlertConnection:
    """One connection and the one thread that uses it (the AlertJobs of alerts/runner.py)."""

    def __init__(self, path: Path) -> None:
        self._thread = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix=f"alerts-{path.stem}")
        self._conn = self._thread.submit(connect, path).result()

    def run_alert_job(self, fn: Callable[[AlertLedger], T]) -> concurrent.futures.Future[T]:
        return self._thread.submit(lambda: fn(AlertLedger(self._conn)))

    def close(self) -> None:
        """After the step in flight (if any)."""
        self._thread.submit(self._conn.close).result()
        self._thread.shutdown()
