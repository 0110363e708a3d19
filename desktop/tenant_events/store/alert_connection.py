"""The alert rules' own connection to a tenant database, in the evaluator's process (alerts/evaluator_child.py).

The writer thread of the process that follows the stream owns the events; the rules read what it committed, by
seq, on this connection, and write their alerts and their watermark in short transactions of their own
(AlertLedger.commit: compare and set, so a second evaluator or a restart never evaluates an event twice). SQLite
serialises the two writers; each waits for the other's short transaction (busy_timeout). A step runs on the
thread that asks for it: live, the process's loop thread, which a commit's kick reaches with no thread between
(a hand-over between threads cost a wake-up each, tens of milliseconds apiece on a loaded machine at a lower
priority); a catch-up's on its own thread at a lower priority.

Every read is one statement, its rows fetched at once (a snapshot lasts one query, never across evaluation),
and a catch-up's rows come in statements of READ_SEQS seqs (AlertLedger.rows): a query the writer's copy meets
keeps the WAL from starting over until it ends, and before each write transaction the writer waits for such a
query to end (checkpoint.py), so each is short.

A database file another program removed (the -wal or -shm, checkpoint.py `FilesHeld`) ends this connection's use:
it would go on reading and writing files nobody else sees, and closing it would fold a stale log into the
database. Each step is refused with `FilesGone` before and after it, and the process ends without closing the
connection (evaluator_child.py); its parent starts another, which opens the files the writer opened again.
"""

from __future__ import annotations

import concurrent.futures
import sqlite3
from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path
from typing import Protocol, TypeVar

from tenant_events.errors import StorageError
from tenant_events.store.alert_records import AlertWrite, HeldLink, RowSegment
from tenant_events.store.alerts_table import AlertLedger
from tenant_events.store.checkpoint import WAL_BOUND, FilesHeld, WalLimits
from tenant_events.store.entity_reader import DirectoryReader
from tenant_events.store.schema import connect

T = TypeVar("T")


class FilesGone(StorageError):
    """A file of the database was removed or replaced by another program since this connection opened it."""


class Hand(Protocol):
    """Runs `work` on another thread and returns (or raises) what it did; the caller's thread waits meanwhile."""

    def __call__(self, work: Callable[[], T]) -> T: ...


class HandedLedger(AlertLedger):
    """A catch-up's ledger: its reads of rows and every transaction run where `hand` runs them (the loop's thread
    of the rules' process, at its parent's priority) while the catch-up's thread, at a lower one, waits. A write
    transaction or a query's snapshot held by a thread at a lower priority lasts as long as the machine keeps
    that thread from a core: the writer's next commit waits for the one write lock, and its restart of the WAL
    for the snapshot (checkpoint.py). The other reads (single rows, the directory's names) run where they are
    asked: they are many, and each is short."""

    def __init__(self, conn: sqlite3.Connection, hand: Hand) -> None:
        super().__init__(conn)
        self._hand = hand

    def rows(
        self, after: int, upto: int, types: Collection[str] | None, raw_types: Collection[str]
    ) -> list[RowSegment]:
        return self._hand(lambda: AlertLedger.rows(self, after, upto, types, raw_types))

    def history(
        self, since: dict[int, list[str]], after: int, upto: int, raw_types: Collection[str]
    ) -> list[RowSegment]:
        return self._hand(lambda: AlertLedger.history(self, since, after, upto, raw_types))

    def access_links(self) -> tuple[list[HeldLink], int]:
        return self._hand(lambda: AlertLedger.access_links(self))

    def directory(self, *, refresh: bool = True) -> DirectoryReader:
        return self._hand(lambda: AlertLedger.directory(self, refresh=refresh))

    def rename(self, details: Mapping[int, tuple[int, str]]) -> set[int]:
        return self._hand(lambda: AlertLedger.rename(self, details))

    def in_transaction(self, work: Callable[[sqlite3.Connection], T]) -> T:
        return self._hand(lambda: AlertLedger.in_transaction(self, work))

    def commit(self, writes: Iterable[AlertWrite], expected: int, watermark: int) -> list[int]:
        return self._hand(lambda: AlertLedger.commit(self, writes, expected, watermark))


class AlertConnection:
    """One connection, used by one thread at a time (the AlertJobs of alerts/runner.py, run at once on the thread
    that asks: the rules' process runs a catch-up's steps on a thread of its own, alerts/evaluator_child.py)."""

    def __init__(self, path: Path) -> None:
        self._conn = connect(path)
        # Copying the WAL is the writer's alone (checkpoint.py). SQLite's own checkpoint after a commit of this
        # connection would copy the store's frames here, at the rules' lower priority, holding the one checkpoint
        # lock the writer's steps need: theirs would fail "busy" and the WAL would grow past its bound. And a WAL
        # this connection starts over is cut back as the writer's is, so its size still tells the frames in use.
        self._conn.execute("PRAGMA wal_autocheckpoint = 0")
        self._conn.execute(f"PRAGMA journal_size_limit = {min(WalLimits().background, WAL_BOUND)}")
        self._conn.execute("SELECT count(*) FROM sqlite_schema")  # its files open, as they are now
        self._files = FilesHeld(path)

    def run_alert_job(
        self, fn: Callable[[AlertLedger], T], hand: Hand | None = None
    ) -> concurrent.futures.Future[T]:
        """`fn(ledger)` now, on this thread; its outcome as a completed future. With `hand`, its reads of rows and
        its transactions run where `hand` runs them (HandedLedger)."""
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        try:
            self._check()
            out = fn(AlertLedger(self._conn) if hand is None else HandedLedger(self._conn, hand))
            self._check()  # (what it wrote went into a removed log: lost with its watermark, evaluated again)
        except Exception as exc:  # handed to the runner, which logs it and tries again later
            future.set_exception(exc)
        else:
            future.set_result(out)
        return future

    def newest_seq(self) -> int:
        """The highest seq the store has given (how far behind the rules are)."""
        return AlertLedger(self._conn).newest_seq()

    def _check(self) -> None:
        gone = self._files.gone()
        if gone is not None:
            raise FilesGone(f"{gone} is no longer the file the alert rules opened")

    def close(self) -> None:
        self._conn.close()
