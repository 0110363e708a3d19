"""A reader in a query as the writer copies the WAL, or as the next transaction begins, does not let that
transaction grow the log: before it the writer finishes the copy and waits for such a query to end, so the log
starts over (checkpoint.py). The rules' process reads beside the writer all through a catch-up; without this
each such meeting appended a whole batch, and a 1M catch-up's log went past its 16 MiB bound."""

from __future__ import annotations

import concurrent.futures
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.events_factory import row
from helpers.slack import bound
from tenant_events.store import Batch, EventReader, StoreWriter
from tenant_events.store.checkpoint import WalLimits

# Scaled down: the writer's own copy from 300 kB (its background thread's every 100 kB)
LIMITS = WalLimits(background=100_000, restart=300_000, idle=3600)  # (never emptied while idle)


class Store:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.wal = path.with_name(path.name + "-wal")
        self.writer = StoreWriter(path, wal_limits=LIMITS)
        self.next = 0

    def batch(self, rows: int) -> Batch:
        first, self.next = self.next, self.next + rows
        return Batch(events=[row(i) for i in range(first, self.next)], cursor=f"c{self.next}")

    def commit(self, rows: int) -> int:
        """The WAL's size after a batch of `rows` events."""
        self.writer.commit_sync(self.batch(rows))
        return self.wal.stat().st_size


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "w.sqlite3")
    try:
        yield s
    finally:
        s.writer.close()
    with EventReader(s.path) as reader:
        assert reader.count() == s.next  # every row kept


def reader_in_a_query(path: Path) -> sqlite3.Connection:
    """Another process's reader with a snapshot of the store as it is now (as one statement holds it)."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("BEGIN")
    conn.execute("SELECT count(*) FROM events").fetchone()
    return conn


def fill_past_restart(store: Store) -> int:
    """Batches until the log is past the writer's restart step; each copy stops at a reader's snapshot."""
    size = 0
    while size < LIMITS.restart:
        size = store.commit(20)
    return size


def test_the_copy_a_reader_kept_from_finishing_is_finished_before_the_next_batch(store):
    store.commit(20)
    reader = reader_in_a_query(store.path)
    size = fill_past_restart(store)
    reader.execute("COMMIT")  # the reader has moved on before the next batch
    reader.close()
    assert store.commit(20) < size  # it started the log over (cut back) instead of adding to it


def test_a_batch_waits_for_a_query_that_keeps_the_log_from_starting_over(store):
    store.commit(20)
    reader = reader_in_a_query(store.path)
    size = fill_past_restart(store)
    pending = store.writer.submit(store.batch(20))  # the reader still in its query
    assert not concurrent.futures.wait([pending], timeout=0.3).done
    reader.execute("COMMIT")
    reader.close()
    pending.result(timeout=bound(10))
    assert store.wal.stat().st_size < size  # started over once the query ended, the batch stored
