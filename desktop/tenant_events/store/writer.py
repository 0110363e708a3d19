"""The one writer of a tenant database: a dedicated thread that owns the write connection.

The engine hands it `Batch`es from asyncio (`submit(batch)`, through the `BatchSink` seam in stream/sink.py); each
commits in ONE transaction (commit.py). Between batches the same thread fills summaries and the full-text
index whenever no batch has arrived for a short while (indexer.py), commits the archive's moves and removes the
moved rows from the full-text index (archive_move.py), and after every write transaction, and when writes
pause, keeps the write-ahead log small (checkpoint.py).
"""

from __future__ import annotations

import concurrent.futures
import logging
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from tenant_events.errors import StorageError
from tenant_events.store import archive_move, indexer
from tenant_events.store.alert_rows import RecentRows
from tenant_events.store.alerts_table import AlertLedger
from tenant_events.store.checkpoint import WalKeeper, WalLimits
from tenant_events.store.commit import commit_batch
from tenant_events.store.indexer import FTS_CHUNK, IDLE_BEFORE_INDEXING, INDEX_AT_LEAST_EVERY
from tenant_events.store.records import Batch, CommitResult, CursorState
from tenant_events.store.schema import OpenNotice, open_database

log = logging.getLogger(__name__)
T = TypeVar("T")


class StoreWriter:
    """Serialises every write to one database on its own thread; safe to call from any thread or loop."""

    def __init__(self, path: Path, *, wal_limits: WalLimits | None = None) -> None:
        self.path = path
        self._wal_limits = wal_limits or WalLimits()
        self.wal: WalKeeper | None = None
        self._jobs: queue.SimpleQueue[
            tuple[Callable[[], object], concurrent.futures.Future[object]] | None
        ] = queue.SimpleQueue()
        self._fts_pending = False
        self._cleanup_pending = False  # moved rows still in the live full-text index (archive_move.py)
        self._closed = False
        self._failed: StorageError | None = None  # set by a failed commit until resume_after_failure()
        self._conn: sqlite3.Connection | None = None
        # The highest seq stored before the next batch: a batch's rows are exactly those above it (AUTOINCREMENT
        # only grows). Kept here, not read per batch; it moves only after a COMMIT.
        self._stored_upto = 0
        self._recent = RecentRows()  # the last batches' rows, for the alert rules (alert_rows.py)
        opened: concurrent.futures.Future[OpenNotice | None] = concurrent.futures.Future()
        self._thread = threading.Thread(
            target=self._run, args=(opened,), name=f"store-writer-{path.stem}", daemon=True
        )
        self._thread.start()
        self.notice: OpenNotice | None = opened.result()

    # -- thread body -------------------------------------------------------------------------------------
    def _run(self, opened: concurrent.futures.Future[OpenNotice | None]) -> None:
        try:
            self._conn, notice = open_database(self.path)
            self._fts_pending = indexer.backlog(self._conn) > 0
            self._cleanup_pending = True  # finds out on its first idle chunk
            self._stored_upto = int(
                self._conn.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()[0]
            )
            # The WAL's size is kept down from here on (checkpoint.py); last: its thread must not outlive a failure.
            self.wal = WalKeeper(self.path, self._conn, self._wal_limits)
        except BaseException as exc:
            opened.set_exception(exc)
            return
        opened.set_result(notice)
        indexing = False
        last_chunk = time.monotonic()
        wal = self.wal
        assert wal is not None
        while True:
            try:
                if self._fts_pending or self._cleanup_pending:
                    job = self._jobs.get(timeout=0 if indexing else IDLE_BEFORE_INDEXING)
                else:
                    job = self._jobs.get(timeout=self._wal_limits.idle if wal.dirty else None)
            except queue.Empty:
                if self._fts_pending:
                    self._index_chunk_safely()
                    last_chunk, indexing = time.monotonic(), True
                elif self._cleanup_pending:
                    self._cleanup_chunk_safely()
                    indexing = True
                else:
                    wal.idle()
                continue
            indexing = False
            if job is None:
                break
            if self._fts_pending and time.monotonic() - last_chunk >= INDEX_AT_LEAST_EVERY:
                # Live traffic, heartbeats and the alert rules' jobs can keep the queue from ever going idle for
                # IDLE_BEFORE_INDEXING: without this a catch-up's rows would stay unindexed, and the directory
                # without their names, for as long as the stream runs.
                self._index_chunk_safely()
                last_chunk = time.monotonic()
            fn, future = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn())
            except BaseException as exc:
                future.set_exception(exc)
        wal.close()  # empties the WAL even while readers stay open (they would keep close() from doing it)
        self._conn.close()

    def _submit(self, fn: Callable[[], T]) -> concurrent.futures.Future[T]:
        if self._closed:
            raise StorageError(f"the event database {self.path.name} is closed")
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._jobs.put((fn, future))  # type: ignore[arg-type]
        return future

    @property
    def conn(self) -> sqlite3.Connection:
        assert self._conn is not None and threading.current_thread() is self._thread, "writer thread only"
        return self._conn

    # -- public API --------------------------------------------------------------------------------------
    def submit(self, batch: Batch) -> concurrent.futures.Future[CommitResult]:
        """Queue `batch` now (batches commit in the order submitted); the future completes after COMMIT."""
        return self._submit(lambda: self._commit(batch))

    def commit_sync(self, batch: Batch) -> CommitResult:
        """Blocking variant for scripts and tests."""
        return self._submit(lambda: self._commit(batch)).result()

    def cursor_state(self) -> CursorState:
        return self._submit(self._cursor_state).result()

    def run_alert_job(self, fn: Callable[[AlertLedger], T]) -> concurrent.futures.Future[T]:
        """`fn(ledger)` on the writer thread between batches: the alert rules see what is committed (runner.py)."""
        return self._submit(lambda: fn(AlertLedger(self.conn, self._recent)))

    def duplicates_total(self) -> int:
        return self._submit(lambda: indexer.counter(self.conn, "duplicates")).result()

    def newest_origin(self) -> tuple[str, str] | None:
        """(xtenant, source) of the newest event stored, None when there is none (blocking): a hub viewer takes
        only events of the tenant its database holds (hub/admission.py)."""
        sql = "SELECT tenant, source FROM events ORDER BY seq DESC LIMIT 1"
        row = self._submit(lambda: self.conn.execute(sql).fetchone()).result()
        return (str(row[0]), str(row[1])) if row else None

    def run_archive_job(self, fn: Callable[[sqlite3.Connection], T]) -> concurrent.futures.Future[T]:
        """`fn(conn)` on the writer thread between batches: a change to the archive's catalog, in a transaction of
        its own (store/archive_move.py); the moved rows' full-text entries are removed afterwards when idle."""
        return self._submit(lambda: self._archive_job(fn))

    def index_all_sync(self) -> None:
        """Finish full-text indexing now (tests, export tools)."""
        self._submit(self._index_everything).result()

    def close(self) -> None:
        """Let queued batches commit, then close the connection (the shutdown flush)."""
        if self._closed:
            return
        self._closed = True
        self._jobs.put(None)
        self._thread.join()

    def resume_after_failure(self) -> CursorState:
        """Accept batches again after a failed commit; returns the stored cursor to resume the stream from."""
        return self._submit(self._resume_after_failure).result()

    # -- on the writer thread ----------------------------------------------------------------------------
    def _resume_after_failure(self) -> CursorState:
        self._failed = None
        return self._cursor_state()

    def _commit(self, batch: Batch) -> CommitResult:
        # After a failed commit the batches queued behind it must fail too: one of them (a heartbeat's cursor
        # needs only a page, where the failed batch needed hundreds) could commit a cursor past the events that
        # were never stored — lost for good. The engine resumes from the stored cursor instead.
        if self._failed is not None:
            raise self._failed
        try:
            return self._commit_batch(batch)
        except Exception as exc:
            self._failed = (
                exc if isinstance(exc, StorageError) else StorageError(f"cannot write to {self.path}: {exc}")
            )
            raise

    def _commit_batch(self, batch: Batch) -> CommitResult:
        result = commit_batch(self.conn, self.path, batch, self._stored_upto)
        last_seq, inserted = result.last_seq, result.inserted
        if last_seq is not None:
            self._stored_upto = last_seq
            if inserted == len(batch.events):  # no duplicate skipped: the rows hold consecutive seqs
                self._recent.add(last_seq - inserted + 1, batch.events)
            self._fts_pending = True
        self._wal_written()
        return result

    def _wal_written(self) -> None:
        assert self.wal is not None
        self.wal.after_write()

    def _cursor_state(self) -> CursorState:
        row = self.conn.execute("SELECT stream_offset, last_event_time, updated_at FROM cursor").fetchone()
        return CursorState(offset=row[0], last_event_time=row[1], updated_at=row[2])

    def _index_chunk(self) -> int:
        indexed = indexer.index_chunk(self.conn)
        self._wal_written()
        self._fts_pending = indexed == FTS_CHUNK
        return indexed

    def _index_chunk_safely(self) -> None:
        try:
            self._index_chunk()
        except sqlite3.Error:
            log.exception("full-text indexing of %s failed; search falls back to scanning", self.path.name)
            self._fts_pending = False

    def _archive_job(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        try:
            return fn(self.conn)
        finally:
            self._cleanup_pending = True
            self._wal_written()

    def _cleanup_chunk_safely(self) -> None:
        try:
            self._cleanup_pending = archive_move.fts_cleanup_chunk(self.conn, self.path)
            self._wal_written()
        except Exception:
            log.exception("removing archived rows from the full-text index of %s failed", self.path.name)
            self._cleanup_pending = False

    def _index_everything(self) -> None:
        while self._index_chunk() == FTS_CHUNK:
            pass
