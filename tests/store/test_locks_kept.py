"""A process that holds a connection keeps its SQLite locks, whatever else it does with the database's files.

POSIX advisory locks belong to the process, and closing ANY descriptor of a file drops every lock the process holds
on it. A database file (or its -wal or -shm) opened and closed with plain file I/O beside a live connection leaves
the process lockless on it: the next process that closes a connection takes itself for the last one, checkpoints
and deletes the write-ahead log under the running writer, which goes on writing into a deleted file (what it
commits from then on is seen by nobody else and lost at its end). These tests are the reproduction: a connection
open, the product's own code beside it, another *process* opening and closing a connection — the WAL must still
be there, and this process must hold no descriptor of a deleted one.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers.events_factory import row
from helpers.slack import bound
from tenant_events.errors import StorageError
from tenant_events.store import Batch, EventReader, StoreWriter
from tenant_events.store.checkpoint import WalLimits
from tenant_events.store.health import check_readable

NEIGHBOUR = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1])
print(conn.execute("SELECT count(*) FROM events").fetchone()[0])
conn.close()
"""


def neighbour_count(db: Path) -> int:
    """Another process opens a read-write connection, counts the events and closes it (as any command does)."""
    done = subprocess.run(
        [sys.executable, "-c", NEIGHBOUR, str(db)], capture_output=True, text=True, timeout=60, check=True
    )
    return int(done.stdout)


def deleted_files_held(db: Path) -> list[str]:
    """The database's files this process holds open although they are gone from the disk."""
    held = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(db)) and target.endswith("(deleted)"):
            held.append(target)
    return held


def assert_log_kept(db: Path) -> None:
    side = [db.with_name(db.name + suffix) for suffix in ("-wal", "-shm")]
    assert all(p.exists() for p in side), f"gone from {db.parent}: {[p.name for p in side if not p.exists()]}"
    assert deleted_files_held(db) == []


def batch(first: int, n: int) -> Batch:
    return Batch(events=[row(i) for i in range(first, first + n)], cursor=f"c{first + n}")


def test_a_readability_check_beside_the_writer_keeps_its_write_ahead_log(tmp_path):
    """The reproduction: `check_readable` (the window opening its readers, every read command) read the file's
    header with a plain open while the writer held the database."""
    db = tmp_path / "acme.sqlite3"
    writer = StoreWriter(db)
    try:
        writer.commit_sync(batch(0, 50))
        check_readable(db)
        assert neighbour_count(db) == 50
        assert_log_kept(db)
        writer.commit_sync(batch(50, 50))
        assert neighbour_count(db) == 100, "the writer's commits must reach the file other processes read"
        assert_log_kept(db)
    finally:
        writer.close()


@pytest.mark.parametrize("kind", ["missing", "directory", "garbage", "empty"])
def test_the_readability_check_still_names_what_is_wrong(tmp_path, kind):
    db = tmp_path / "acme.sqlite3"
    if kind == "directory":
        db.mkdir()
    elif kind == "garbage":
        db.write_bytes(b"this is not a database at all\n" * 100)
    elif kind == "empty":
        db.write_bytes(b"")
    words = {
        "missing": "cannot read",
        "directory": "is a directory",
        "garbage": "is not a SQLite database",
        "empty": "is empty (0 bytes)",
    }
    with pytest.raises(StorageError) as info:
        check_readable(db)
    assert str(db) in str(info.value) and words[kind] in str(info.value), str(info.value)


def test_closing_the_writer_while_readers_stay_open_keeps_their_locks(tmp_path):
    """The window's readers outlive the writer (quit, a tenant stopped): the writer's own descriptors of the -shm
    and of the database (its WAL bookkeeping, its background checkpoint) must not take the readers' locks along."""
    db = tmp_path / "acme.sqlite3"
    writer = StoreWriter(db, wal_limits=WalLimits(background=20_000, restart=10_000_000))
    reader = EventReader(db)
    try:
        for n in range(0, 2000, 100):
            writer.commit_sync(batch(n, 100))
        assert writer.wal is not None
        deadline = time.monotonic() + bound(
            60
        )  # the background copy runs on its own thread: wait for it to have run
        while writer.wal.background.runs == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert writer.wal.background.runs > 0, "the background checkpoint never ran"
        assert reader.count() == 2000
        writer.close()
        assert neighbour_count(db) == 2000
        assert_log_kept(db)
        assert reader.count() == 2000
    finally:
        writer.close()
        reader.close()
