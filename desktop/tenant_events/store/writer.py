"""The one writer of a tenant database: a dedicated thread that owns the write connection.

The engine hands it `Batch`es from asyncio (`await writer.commit(batch)`); each batch — events, rejected
frames, an optional gap marker and the cursor after them — commits in ONE transaction (issue 5), so after a
crash the stored cursor never points past a stored event nor before one that is missing. Duplicates (same
event id and time, schema.py _V2) are dropped by the UNIQUE constraint and counted.

Summaries and full-text indexing run on the same thread whenever no batch has arrived for a short while, a few
hundred rows per transaction, so they never slow ingest; `EventReader` summarises and searches the
not-yet-indexed tail itself.
Retention deletes in small chunks, each its own transaction, so a reader or the next batch never waits long.
After every write transaction, and when writes pause, checkpoint.py keeps the write-ahead log small.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final, TypeVar

from tenant_events.errors import StorageError
from tenant_events.store import directory
from tenant_events.store.alert_rows import RecentRows
from tenant_events.store.alerts_table import AlertLedger
from tenant_events.store.checkpoint import WalKeeper, WalLimits
from tenant_events.store.records import Batch, CommitResult, CursorState, EventRow, summary_of
from tenant_events.store.schema import OpenNotice, open_database, rollback

log = logging.getLogger(__name__)
T = TypeVar("T")

FTS_CHUNK: Final = 500
# Seconds without a batch before the indexer starts; once started it goes on chunk after chunk until a batch
# arrives. A catch-up delivers a batch every few ms, so indexing (summaries in Python, FTS in SQLite) waits
# for it to end instead of taking the GIL from the ingest path.
IDLE_BEFORE_INDEXING: Final = 0.5
RETENTION_CHUNK: Final = 2000

# A batch's events go in as a few multi-row `INSERT … VALUES (…),(…)…` statements of fixed sizes (so the statement
# cache holds five plans): each is one sqlite3_step in C with the GIL released, instead of one GIL hand-off per
# row with executemany; the rows keep the stream's order as the stored order (AUTOINCREMENT seq). Measured
# cheaper than the earlier json_each(?) form, which re-serialised and re-parsed each row's raw JSON in SQLite.
# ON CONFLICT skips only a duplicate event (same time and id, schema.py _V2); OR IGNORE would also hide a NOT NULL
# violation.
_EVENT_COLUMNS: Final = (
    "event_id, stream_offset, type, family, time, time_ms, source, tenant, purpose, summary, raw, received_at"
)
# 1,000 × 12 parameters, under SQLite's 32,766: a full batch is ONE statement, so one GIL hand-back per batch
# (each can wait up to the 5 ms switch interval while the engine parses).
_CHUNK_ROWS: Final = (1000, 100, 20, 5, 1)


@functools.cache
def _insert_events_sql(rows: int) -> str:
    values = ",".join(["(?,?,?,?,?,?,?,?,?,?,?,?)"] * rows)
    # Only constants and "?" placeholders go into the text; every value is bound.
    return f"INSERT INTO events ({_EVENT_COLUMNS}) VALUES {values} ON CONFLICT (time_ms, event_id) DO NOTHING"  # noqa: S608


def _insert_events(conn: sqlite3.Connection, events: list[EventRow]) -> int | None:
    """Insert in stream order; returns the seq of the last row inserted (sqlite3_last_insert_rowid)."""
    start, total, last = 0, len(events), None
    for size in _CHUNK_ROWS:
        while total - start >= size:
            last = conn.execute(
                _insert_events_sql(size),
                [v for e in events[start : start + size] for v in e],  # EventRow: columns in order
            ).lastrowid
            start += size
    return last


_INSERT_REJECTED: Final = (
    "INSERT INTO rejected (received_at, event_name, stream_offset, reason, raw) VALUES (?, ?, ?, ?, ?)"
)


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
            self._fts_pending = self._fts_backlog() > 0
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
        wal = self.wal
        assert wal is not None
        while True:
            try:
                if self._fts_pending:
                    job = self._jobs.get(timeout=0 if indexing else IDLE_BEFORE_INDEXING)
                else:
                    job = self._jobs.get(timeout=self._wal_limits.idle if wal.dirty else None)
            except queue.Empty:
                if self._fts_pending:
                    self._index_chunk_safely()
                    indexing = True
                else:
                    wal.idle()
                continue
            indexing = False
            if job is None:
                break
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
    async def commit(self, batch: Batch) -> CommitResult:
        """Commit `batch` in one transaction on the writer thread."""
        return await asyncio.wrap_future(self._submit(lambda: self._commit(batch)))

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
        return self._submit(lambda: self._counter("duplicates")).result()

    async def apply_retention(self, *, max_age_days: float | None = None, max_rows: int | None = None) -> int:
        """Delete events older than `max_age_days` (by event time) and beyond the newest `max_rows`, in chunks."""
        removed = 0
        while True:
            n = await asyncio.wrap_future(self._submit(lambda: self._retention_chunk(max_age_days, max_rows)))
            removed += n
            if n < RETENTION_CHUNK:
                return removed

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
        conn = self.conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                before_seq = self._stored_upto
                before_changes = conn.total_changes
                last_rowid = _insert_events(conn, batch.events)
                inserted = conn.total_changes - before_changes
                duplicates = len(batch.events) - inserted
                # The new rows lie in before_seq+1 .. the last row inserted. Not before_seq + inserted: a skipped
                # duplicate still uses up a seq (AUTOINCREMENT). No query: each statement the writer runs is one
                # more wait for the GIL while the engine parses.
                first_seq, last_seq = (before_seq + 1, last_rowid) if inserted else (None, None)
                directory.after_batch(conn, last_seq, inserted)  # live events: into the directory now
                if duplicates:
                    conn.execute(
                        "UPDATE counters SET value = value + ? WHERE name = 'duplicates'", (duplicates,)
                    )
                if batch.rejected:
                    conn.executemany(
                        _INSERT_REJECTED,
                        [(r.received_at, r.event_name, r.offset, r.reason, r.raw) for r in batch.rejected],
                    )
                if batch.gap is not None:
                    g = batch.gap
                    conn.execute(
                        "INSERT INTO gaps (created_at, reason, resumed_from, lost_cursor, after_seq)"
                        " VALUES (?, ?, ?, ?, ?)",
                        (g.created_at, g.reason, g.resumed_from, g.lost_cursor, before_seq),
                    )
                if batch.cursor is not None:
                    conn.execute(
                        "UPDATE cursor SET stream_offset = ?, updated_at = ?,"
                        " last_event_time = CASE WHEN ? IS NOT NULL AND (last_event_time IS NULL"
                        " OR ? > last_event_time) THEN ? ELSE last_event_time END WHERE id = 1",
                        (batch.cursor, time.time(), batch.last_event_time, batch.last_event_time,
                         batch.last_event_time),
                    )  # fmt: skip
                conn.execute("COMMIT")
            except BaseException:
                rollback(conn)
                raise
        except sqlite3.OperationalError as exc:
            raise StorageError(
                f"cannot write to {self.path}: {exc}", "free disk space or check the data dir"
            ) from exc
        if last_seq is not None:
            self._stored_upto = last_seq
            if inserted == len(batch.events):  # no duplicate skipped: the rows hold consecutive seqs
                self._recent.add(last_seq - inserted + 1, batch.events)
            self._fts_pending = True
        self._wal_written()
        return CommitResult(
            inserted=inserted,
            duplicates=duplicates,
            rejected=len(batch.rejected),
            cursor=batch.cursor,
            first_seq=first_seq,
            last_seq=last_seq,
            last_event_time=batch.last_event_time,
        )

    def _wal_written(self) -> None:
        assert self.wal is not None
        self.wal.after_write()

    def _max_seq(self) -> int:
        row = self.conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'events'").fetchone()
        return int(row[0]) if row else 0

    def _cursor_state(self) -> CursorState:
        row = self.conn.execute("SELECT stream_offset, last_event_time, updated_at FROM cursor").fetchone()
        return CursorState(offset=row[0], last_event_time=row[1], updated_at=row[2])

    def _counter(self, name: str) -> int:
        return int(self.conn.execute("SELECT value FROM counters WHERE name = ?", (name,)).fetchone()[0])

    def _fts_backlog(self) -> int:
        return self._max_seq() - self._counter("fts_upto")

    def _index_chunk(self) -> int:
        """Fill the summaries of the next FTS_CHUNK rows and add them to the full-text index, one transaction."""
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            upto = self._counter("fts_upto")
            rows = conn.execute(
                "SELECT seq, event_id, type, summary, raw FROM events WHERE seq > ? ORDER BY seq LIMIT ?",
                (upto, FTS_CHUNK),
            ).fetchall()
            indexed = [
                (seq, eid, summary or summary_of(kind, raw), raw) for seq, eid, kind, summary, raw in rows
            ]
            if indexed:
                conn.executemany(
                    "UPDATE events SET summary = ? WHERE seq = ? AND summary IS NULL",
                    [(r[2], r[0]) for r in indexed],
                )
                conn.executemany(
                    "INSERT INTO events_fts (rowid, event_id, summary, raw) VALUES (?, ?, ?, ?)", indexed
                )
                upto = indexed[-1][0]
            else:
                upto = max(upto, self._max_seq())
            directory.catch_up(conn, upto)  # what after_batch left for now (catch-ups)
            conn.execute("UPDATE counters SET value = ? WHERE name = 'fts_upto'", (upto,))
            conn.execute("COMMIT")
        except BaseException:
            rollback(conn)
            raise
        self._wal_written()
        self._fts_pending = len(rows) == FTS_CHUNK
        return len(rows)

    def _index_chunk_safely(self) -> None:
        try:
            self._index_chunk()
        except sqlite3.Error:
            log.exception("full-text indexing of %s failed; search falls back to scanning", self.path.name)
            self._fts_pending = False

    def _index_everything(self) -> None:
        while self._index_chunk() == FTS_CHUNK:
            pass

    def _retention_chunk(self, max_age_days: float | None, max_rows: int | None) -> int:
        conn = self.conn
        seqs: list[int] = []
        if max_age_days is not None:
            cutoff_ms = int((time.time() - max_age_days * 86400) * 1000)
            seqs = [r[0] for r in conn.execute(
                "SELECT seq FROM events WHERE time_ms < ? LIMIT ?", (cutoff_ms, RETENTION_CHUNK))]  # fmt: skip
        if max_rows is not None and len(seqs) < RETENTION_CHUNK:
            excess = int(conn.execute("SELECT count(*) FROM events").fetchone()[0]) - len(seqs) - max_rows
            if excess > 0:
                seqs += [r[0] for r in conn.execute(
                    "SELECT seq FROM events WHERE seq NOT IN (SELECT value FROM json_each(?)) ORDER BY seq LIMIT ?",
                    (str(seqs), min(excess, RETENTION_CHUNK - len(seqs))))]  # fmt: skip
        if not seqs:
            return 0
        conn.execute("BEGIN IMMEDIATE")
        try:
            upto = self._counter("fts_upto")
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
        self._wal_written()
        log.info("retention removed %d events from %s", len(seqs), self.path.name)
        return len(seqs)
