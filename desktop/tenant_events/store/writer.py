"""The one writer of a tenant database: a dedicated thread that owns the write connection.

The engine hands it `Batch`es from asyncio (`submit(batch)`, through the `BatchSink` seam in stream/sink.py); each
commits in ONE transaction (commit.py). Between batches the same thread fills summaries and the full-text
index whenever no batch has arrived for a short while (indexer.py), commits the archive's moves, removes the
moved rows from the full-text index (archive_move.py) and merges the index when enough have left it
(fts_merge.py), and around every write transaction, and when writes pause, keeps the write-ahead log small
(checkpoint.py). That idle work gives way to the alert rules' process while it catches up (`idle_waits_for`).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import queue
import sqlite3
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final, TypeVar

from tenant_events.errors import StorageError
from tenant_events.store import archive_move, connections, fts_merge, indexer
from tenant_events.store.alerts_table import AlertLedger
from tenant_events.store.checkpoint import WalKeeper, WalLimits
from tenant_events.store.commit import commit_batch
from tenant_events.store.database_open import OpenNotice, open_database
from tenant_events.store.indexer import FTS_CHUNK, IDLE_BEFORE_INDEXING, INDEX_AT_LEAST_EVERY
from tenant_events.store.records import Batch, CommitResult, CursorState
from tenant_events.store.write_back import write_back
from tenant_events.store.write_trouble import disk_trouble, files_gone_error, needs_reopening

log = logging.getLogger(__name__)
T = TypeVar("T")
# CPython hands the interpreter lock to a thread that asks for it only when the holder blocks or has run for the
# switch interval (5 ms by default). The writer gives the lock up inside every SQLite call and asks for it back
# after each, while the engine's thread decodes the next batch without blocking: at 5 ms a wait, a batch's few
# statements waited longer than storing it took, and the two threads took turns instead of overlapping.
SWITCH_INTERVAL: Final = 0.0005


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
        self.merger = fts_merge.IndexMerger()  # the index merged once enough rows left it (fts_merge.py)
        self._turn = 0  # which idle work the next turn under traffic goes to (_idle_step)
        self.idle_waits_for: list[Callable[[], bool]] = []  # the monitor's: see indexer.gives_way
        self._closed = False
        self._failed: StorageError | None = None  # set by a failed commit until resume_after_failure()
        self._conn: sqlite3.Connection | None = None
        # The highest seq stored before the next batch: a batch's rows are exactly those above it (AUTOINCREMENT
        # only grows). Kept here, not read per batch; it moves only after a COMMIT.
        self._stored_upto = 0
        self._files_gone: str | None = None  # a file of the database another program removed (checkpoint.py)
        # a removed file found while idle: the next commit is refused with it (_lost)
        self._untold: StorageError | None = None
        if sys.getswitchinterval() > SWITCH_INTERVAL:  # (for the whole process: only ever made shorter)
            sys.setswitchinterval(SWITCH_INTERVAL)
        opened: concurrent.futures.Future[OpenNotice | None] = concurrent.futures.Future()
        self._thread = threading.Thread(
            target=self._run, args=(opened,), name=f"store-writer-{path.stem}", daemon=True
        )
        self._thread.start()
        self.notice: OpenNotice | None = opened.result()

    # -- thread body -------------------------------------------------------------------------------------
    def _open(self) -> OpenNotice | None:
        self._conn, notice = open_database(self.path)
        self._fts_pending = indexer.backlog(self._conn) > 0
        # (not assumed: under traffic a turn given to a clean-up with nothing to do is 2 s more for names to wait)
        self._cleanup_pending = archive_move.cleanup_due(self._conn)
        self.merger.check(self._conn)
        self._stored_upto = int(self._conn.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()[0])
        # The WAL's size is kept down from here on (checkpoint.py); last: its thread must not outlive a failure.
        self.wal = WalKeeper(self.path, self._conn, self._wal_limits)
        return notice

    def _run(self, opened: concurrent.futures.Future[OpenNotice | None]) -> None:
        try:
            notice = self._open()
        except BaseException as exc:
            opened.set_exception(exc)
            return
        opened.set_result(notice)
        indexing = False
        last_chunk = time.monotonic()
        while True:
            wal = self.wal
            waiting = indexer.gives_way(self.idle_waits_for, self.path.name)
            try:
                if wal is None:  # reopening failed: only jobs, each told so, until resume_after_failure
                    job = self._jobs.get()
                elif self._idle_work():
                    job = self._jobs.get(timeout=0 if indexing and not waiting else IDLE_BEFORE_INDEXING)
                else:  # idle: a look at the files every idle period, written or not (a paused stream, a quiet tenant)
                    job = self._jobs.get(timeout=self._wal_limits.idle)
            except queue.Empty:
                if self._idle_work():
                    if waiting and time.monotonic() - last_chunk < INDEX_AT_LEAST_EVERY:  # (gives_way)
                        indexing = False
                        continue
                    self._idle_step(by_turns=False)
                    last_chunk, indexing = time.monotonic(), True
                elif wal is not None:
                    wal.idle()
                    if (gone := wal.files.gone()) is not None:
                        with contextlib.suppress(StorageError):
                            self._lost(gone)
                continue
            indexing = False
            if job is None:
                break
            if self._idle_work() and time.monotonic() - last_chunk >= INDEX_AT_LEAST_EVERY:
                # Live traffic, heartbeats and the alert rules' jobs can keep the queue from ever going idle for
                # IDLE_BEFORE_INDEXING: without this a catch-up's rows would stay unindexed, and the directory
                # without their names, for as long as the stream runs — and the rows moved to the archive would
                # stay in the live full-text index, which then grew with the whole history.
                self._idle_step(by_turns=True)
                last_chunk = time.monotonic()
            fn, future = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn())
            except BaseException as exc:
                future.set_exception(exc)
        self._close_connection()
        if self._files_gone is not None:  # no reopen to wait for any more (_refuse_until_reopened)
            connections.watch(self.path, None)

    def _close_connection(self) -> None:
        """Empty the WAL and close (even while readers stay open: they would keep close() from doing it). A store
        that has failed may fail here again: that is logged, never raised out of the thread (quit goes on)."""
        wal, conn, self.wal, self._conn = self.wal, self._conn, None, None
        try:
            if wal is not None:
                wal.close()
        except Exception:
            log.exception("closing the write-ahead log of %s failed", self.path.name)
        try:
            if conn is not None:
                conn.close()
        except sqlite3.Error as exc:
            log.warning("closing %s failed: %s", self.path.name, exc)

    def _submit(self, fn: Callable[[], T]) -> concurrent.futures.Future[T]:
        if self._closed:
            raise StorageError(f"the event database {self.path.name} is closed")
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._jobs.put((fn, future))  # type: ignore[arg-type]
        return future

    @property
    def conn(self) -> sqlite3.Connection:
        assert threading.current_thread() is self._thread, "writer thread only"
        if self._conn is None:
            raise StorageError(f"the event database {self.path} is not open", "it is opened again by itself")
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
        return self._submit(lambda: fn(AlertLedger(self.conn)))

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
        if self._files_gone is not None or self._conn is None or needs_reopening(self._failed):
            self._reopen()
        self._failed = None
        return self._cursor_state()

    def _reopen(self) -> None:
        """Open the database again, as at start, after its files were removed or SQLite reported an I/O error.
        Every connection of this process to the file is closed first (store/connections.py): a new one beside an
        old one would take up the old, removed wal-index. Closing copies what only the removed WAL held into the
        file when no other process has it open (else it is gone, and the cursor with it: they commit together);
        the stream resumes from the cursor in the file, and the integrity check at open moves a damaged file
        aside as at any start."""
        log.warning("%s: opening the event database again", self.path.name)
        gone = self._files_gone
        removed = gone == self.path.name and self._conn is not None and not self.path.exists()
        if removed and self._conn is not None and write_back(self._conn, self.path):  # (raises: tried again)
            log.warning("%s: written back from the connection that still had it open", self.path.name)
        try:
            connections.let_go_of(self.path)  # first: the copy at close then has no reader to wait for
            self._close_connection()
            try:
                connections.all_closed(self.path)
            except StorageError:
                self._refuse_until_reopened(gone)
                raise
            connections.watch(self.path, None)  # no connection holds the removed wal-index any more
            self._open()
        except sqlite3.Error as exc:
            raise StorageError(
                f"cannot open the event database {self.path} again: {exc}", "check the data dir"
            ) from None
        finally:
            connections.reopened(self.path)
        self._files_gone = None
        log.warning("%s: the event database is open again", self.path.name)

    def _refuse_until_reopened(self, gone: str | None) -> None:
        """A connection of this process still holds the removed wal-index (a short-lived one all_closed() waited
        for in vain) and the writer's is closed: a new connection would take the index up. New connections are
        refused in words until the writer has opened the file again, or is closed."""
        if gone is not None:
            connections.watch(self.path, lambda: gone)

    def _commit(self, batch: Batch) -> CommitResult:
        # After a failed commit the batches queued behind it must fail too: one of them (a heartbeat's cursor
        # needs only a page, where the failed batch needed hundreds) could commit a cursor past the events that
        # were never stored — lost for good. The engine resumes from the stored cursor instead.
        if self._failed is not None:
            raise self._failed
        try:
            if (untold := self._untold) is not None:
                raise untold
            return self._commit_batch(batch)
        except Exception as exc:
            if exc is self._untold:
                self._untold = None  # said now, by the stream
            self._failed = (
                exc if isinstance(exc, StorageError) else StorageError(f"cannot write to {self.path}: {exc}")
            )
            raise

    def _commit_batch(self, batch: Batch) -> CommitResult:
        if self._files_gone is not None:
            raise files_gone_error(self.path, self._files_gone)
        self._before_write()
        result = commit_batch(self.conn, self.path, batch, self._stored_upto)
        last_seq = result.last_seq
        if last_seq is not None:
            self._stored_upto = last_seq
            self._fts_pending = True
        self._wal_written()
        return result

    def _before_write(self) -> None:
        """Before each write transaction: a WAL past its restart step starts over with it (checkpoint.py)."""
        if self.wal is not None:
            self.wal.before_write()

    def _wal_written(self) -> None:
        assert self.wal is not None
        self.wal.after_write()
        if (gone := self.wal.files.gone()) is not None:
            self._lost(gone)

    def _lost(self, gone: str) -> None:
        """A file of the database was removed: open it again at once (the sooner, the less goes into the removed
        log); the write that found it is refused all the same, so the stream resumes from the stored cursor and
        says what happened. Found while idle or indexing, the next commit is refused with it instead."""
        self._files_gone = gone
        said = files_gone_error(self.path, gone)  # before the reopen: a removed file is written back by it
        log.warning("%s", said)
        self._untold = said
        with contextlib.suppress(StorageError):  # not now: resume_after_failure tries again
            self._reopen()
        raise said

    def _cursor_state(self) -> CursorState:
        row = self.conn.execute("SELECT stream_offset, last_event_time, updated_at FROM cursor").fetchone()
        return CursorState(offset=row[0], last_event_time=row[1], updated_at=row[2])

    def _idle_work(self) -> bool:
        # (the clean-up and the merge wait while the file is being opened again)
        on_file = self.wal is not None
        return self._fts_pending or (on_file and (self._cleanup_pending or self.merger.pending))

    def _idle_step(self, *, by_turns: bool) -> None:
        """One chunk of idle work: indexing first, then the moved rows' clean-up, then merging. Under traffic
        (`by_turns`) each pending kind takes its turn: live events keep indexing pending after every batch, and
        the other two never ran."""
        kinds = [
            kind
            for kind, pending in (
                (self._index_chunk_safely, self._fts_pending),
                (self._cleanup_chunk_safely, self._cleanup_pending and self.wal is not None),
                (self._merge_step_safely, self.merger.pending and self.wal is not None),
            )
            if pending
        ]
        turn = self._turn % len(kinds) if by_turns else 0  # (indexing first: names wait on it)
        self._turn += by_turns
        kinds[turn]()

    def _index_chunk(self) -> int:
        self._before_write()
        indexed = indexer.index_chunk(self.conn)
        self._wal_written()
        self._fts_pending = indexed == FTS_CHUNK
        return indexed

    def _index_chunk_safely(self) -> None:
        try:
            self._index_chunk()
        except StorageError as exc:  # a file of the database removed: said by _lost, and by the next commit
            if exc is not self._untold:
                log.warning("%s", exc)
        except sqlite3.Error as exc:
            if disk_trouble(exc):  # a full or failing disk: the user is told by the stream's paused commits
                log.warning(
                    "full-text indexing of %s paused: %s; it goes on after the next commit",
                    self.path.name,
                    exc,
                )
            else:
                log.exception(
                    "full-text indexing of %s failed; search falls back to scanning", self.path.name
                )
            self._fts_pending = False  # (a commit sets it again)

    def _archive_job(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        self._before_write()
        try:
            return fn(self.conn)
        finally:
            self._cleanup_pending = True
            self._wal_written()

    def _cleanup_chunk_safely(self) -> None:
        try:
            self._before_write()
            self._cleanup_pending = archive_move.fts_cleanup_chunk(self.conn, self.path)
            self._wal_written()
            if not self._cleanup_pending:
                self.merger.check(self.conn)
        except Exception:
            log.exception("removing archived rows from the full-text index of %s failed", self.path.name)
            self._cleanup_pending = False

    def _merge_step_safely(self) -> None:
        try:
            self._before_write()
            self.merger.step(self.conn)
            self._wal_written()
        except Exception:
            log.exception("merging the full-text index of %s failed", self.path.name)
            self.merger.pending = False

    def _index_everything(self) -> None:
        while self._index_chunk() == FTS_CHUNK:
            pass
