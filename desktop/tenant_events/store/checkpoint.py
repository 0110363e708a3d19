"""Keeps a tenant database's write-ahead log small: when to copy it into the database file, and on which thread.

Every commit appends whole pages to the WAL (the rows, but also index, FTS, cursor and counter pages), so a
stream of small commits grows it far faster than the rows it holds: counting row bytes, as this once did, let
~24 events/s leave a 39 MiB WAL beside a 4.7 MiB database. So after every write transaction the writer looks at
how much of the WAL is in use (`WalIndex`) and, as it grows (`WalLimits`):

    background  every `background` bytes, ask the checkpoint thread for a PASSIVE copy; it runs beside the
                writer's commits (sqlite.org/wal.html "Checkpointing"), on the core the engine is not using
    restart     copy the rest on the writer thread (PASSIVE: the background did the bulk), so the next
                transaction starts the WAL over from its beginning, in the same file cut back to `background`;
                and before that next transaction, make sure it does (RESTART, waiting for readers: below)
    idle        no write for `idle` seconds: empty the file (TRUNCATE, not waiting for readers)

A write transaction starts the WAL over only when every frame has been copied and no reader still holds a
snapshot that reads from the WAL (sqlite.org/wal.html "Avoiding Excessively Large WAL Files"); a reader in a
query when the writer copies keeps the copy from finishing, and one in a query when the next transaction begins
keeps it from starting over, so that transaction is appended, and the WAL grows by a whole transaction each
time that happens. The rules' process reads beside the writer all through a catch-up (store/alert_connection.py),
so it happened often: a log of 9 MiB took a transaction of 7 MiB more. So before each write transaction while
the WAL is past `restart`, the writer finishes the copy and waits for the readers still in a query that began
before it (RESTART): their queries are short (a reader's snapshot lasts one statement); a reader beginning
after the copy reads the database file and keeps nothing from starting over. The WAL is then at most `restart`
plus the largest transaction (a catch-up's batch, ~8 MiB): within WAL_BOUND. After busy_timeout the writer goes
on (a reader stuck in one query must not stop storing) and the WAL grows until the next write finds it free.
    open/close  empty the file (TRUNCATE, waiting for readers): a clean stop leaves no WAL behind even when
                readers stay open, and a start after a crash folds in what the crash left

Nothing here opens the database's files other than through SQLite (docs/architecture.md "Where each guarantee
lives"): the WAL's use is read from its size, and each copy's fsync is SQLite's own. SQLite's automatic
checkpoint is off: it ran on the writer thread every 1,000 pages. Readers hold a snapshot only for one query
(reader.py). Durability is unchanged: a commit is in the WAL (synchronous=NORMAL) whether or not it is copied.
"""

from __future__ import annotations

import gc
import logging
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from tenant_events.errors import StorageError
from tenant_events.store import connections
from tenant_events.store.schema import BUSY_TIMEOUT_MS, connect

log = logging.getLogger(__name__)

MiB: Final = 1024 * 1024
# What the WAL file may reach at most. The steps start well before it: one write transaction — a batch of at most
# batch_max_bytes of event text with its index and directory pages, an FTS chunk, a retention chunk — adds up to
# ~8 MiB on top of where it starts.
WAL_BOUND: Final = 16 * MiB


@dataclass(frozen=True)
class WalLimits:
    """Bytes of frames in the WAL at which each step starts, and the idle time before the WAL is emptied."""

    background: int = 2 * MiB
    restart: int = 7 * MiB  # (plus the largest transaction: within WAL_BOUND)
    idle: float = 1.0


class WalIndex:
    """How much of the WAL is in use, from the size of the `-wal` file (a `stat`, which opens nothing).

    Neither the file nor its wal-index (`-shm`) is opened here: closing any descriptor of them would drop every
    POSIX lock the process holds on the file, and the next process to close its connection would take itself for
    the last one and delete the WAL under the writer. The size tells because a restart cuts the file back: when
    the WAL starts over after a complete copy, SQLite truncates it to `journal_size_limit` at the end of the first
    transaction (sqlite.org/pragma.html#pragma_journal_size_limit), and the keeper sets that limit at its first
    step. So the size is the frames in use whenever they pass that step, and never less than them."""

    def __init__(self, path: Path) -> None:
        self._wal = path.with_name(path.name + "-wal")

    def size(self) -> int:
        """Bytes of the WAL file (at least the frames in use; exactly them past the first step)."""
        try:
            return self._wal.stat().st_size
        except OSError:
            return 0


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino


class FilesHeld:
    """The database's files as the writer opened them. SQLite never removes the -wal or -shm while a connection
    is open, so a file gone or replaced since means another program removed it: the writer's commits would go on
    into a file nobody else sees (and be lost at its end). Looked at with `stat` only."""

    def __init__(self, path: Path) -> None:
        names = (path.name, path.name + "-wal", path.name + "-shm")
        self._held = {name: _identity(path.with_name(name)) for name in names}
        self._dir = path.parent

    def gone(self) -> str | None:
        """The name of the first file removed or replaced since the writer opened it, None while all are there."""
        for name, identity in self._held.items():
            if identity is not None and _identity(self._dir / name) != identity:
                return name
        return None


class WalKeeper:
    """Used on the writer thread only: checks the WAL after each write and copies it at the sizes above."""

    def __init__(self, path: Path, conn: sqlite3.Connection, limits: WalLimits) -> None:
        self.path = path
        self.limits = limits
        self.dirty = False  # written since the WAL was last emptied
        self._conn = conn
        # SQLite runs one checkpoint at a time and never waits for another (not even with a busy_timeout): the
        # writer's own wait for the background's to end instead of finding the WAL "busy".
        self._one_at_a_time = threading.Lock()
        self._size = 0
        self._next_background = limits.background
        self._failing = False  # the last checkpoint failed (told once, not once a second on a full disk)
        conn.execute("PRAGMA wal_autocheckpoint = 0")
        # A restart cuts the file back to the first step, so its size measures the frames in use (WalIndex).
        conn.execute(f"PRAGMA journal_size_limit = {min(limits.background, WAL_BOUND)}")
        self.checkpoint("TRUNCATE", wait=True)  # what a crash left behind, folded in before anything is added
        self.index = WalIndex(path)
        self.files = FilesHeld(path)
        connections.watch(path, self.files.gone)
        # last: nothing after it can fail and leave its thread running
        self.background = WalCheckpointer(path, self._one_at_a_time)

    def before_write(self) -> None:
        """Before every write transaction (on the writer thread): past `restart`, make sure it starts the WAL
        over — the copy finished and no reader left in a query that began before it (waiting up to busy_timeout
        for them: one statement each)."""
        if self.index.size() >= self.limits.restart:
            self.checkpoint("RESTART", wait=True)

    def after_write(self) -> None:
        """After every write transaction (on the writer thread)."""
        self.dirty = True
        size = self.index.size()
        if size < self._size:  # the WAL started over (and was cut back to the first step)
            self._next_background = size + self.limits.background
        self._size = size
        # past `restart`: the bulk of the copy now, between two transactions, waiting for none
        if size >= self.limits.restart:
            self.checkpoint("PASSIVE", wait=False)
        elif size >= self._next_background:
            self.background.request()
            self._next_background = size + self.limits.background

    def idle(self) -> None:
        """Nothing written for `limits.idle` s: empty the WAL unless a reader is in a query (then: next idle)."""
        if self.dirty and self.checkpoint("TRUNCATE", wait=False):
            self.dirty = False

    def close(self) -> None:
        """Stop the background thread and leave the WAL empty (the clean-stop promise)."""
        connections.watch(self.path, None)
        self.background.close()
        done = self.checkpoint("TRUNCATE", wait=True)
        if not done:
            # A statement never reset keeps a read open for as long as its cursor lives, and a cursor caught in a
            # reference cycle (a kept exception's traceback holding the frame that iterated it) lives until the
            # next collection: collected now, such a read ends and the WAL can be emptied.
            gc.collect()
            done = self.checkpoint("TRUNCATE", wait=True)
        if not done:
            log.warning(
                "%s: readers kept the write-ahead log from being emptied at close (%d bytes)",
                self.path.name,
                self.index.size(),
            )

    def checkpoint(self, mode: Literal["PASSIVE", "RESTART", "TRUNCATE"], *, wait: bool) -> bool:
        """True when every frame was copied (RESTART, TRUNCATE: and no reader still uses the WAL).

        `wait`: wait for a background copy to end and up to busy_timeout for readers to finish their query; else
        give up at once."""
        if not self._one_at_a_time.acquire(blocking=wait):
            return False  # the background is copying; the next write tries again
        try:
            done = self._checkpoint_now(mode, wait)
        except sqlite3.Error as exc:  # not fatal: the frames stay in the WAL (durable); the next step retries
            if not self._failing:
                log.warning("copying the write-ahead log of %s into it failed: %s", self.path.name, exc)
            self._failing = True
            return False
        finally:
            self._one_at_a_time.release()
        self._failing = False
        return done

    def _checkpoint_now(self, mode: str, wait: bool) -> bool:
        conn = self._conn
        if not wait:
            conn.execute("PRAGMA busy_timeout = 0")
        try:
            busy, frames, copied = conn.execute(f"PRAGMA wal_checkpoint({mode})").fetchone()
        finally:
            if not wait:
                conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        return not busy and frames == copied


class WalCheckpointer:
    """Runs `PRAGMA wal_checkpoint(PASSIVE)` on its own connection whenever asked, one at a time, until closed."""

    def __init__(self, path: Path, one_at_a_time: threading.Lock) -> None:
        self.path = path
        self.runs = 0  # checkpoints done (tests, stats)
        self._one_at_a_time = one_at_a_time  # held while a checkpoint runs
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
                    with self._one_at_a_time:
                        conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                    self.runs += 1
                except (sqlite3.Error, StorageError) as exc:
                    # Not fatal: the frames stay in the WAL (durable) and the writer copies them itself.
                    log.warning("background checkpoint of %s failed: %s", self.path.name, exc)
        finally:
            if conn is not None:
                conn.close()
