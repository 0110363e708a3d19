"""The write-ahead log stays small at any event rate and is empty after every clean stop.

A live stream commits small batches often (~24 events/s from the simulator's demo: a batch every 100 ms, plus
heartbeat cursors), and each commit writes whole pages — index, FTS, cursor, counters — to the WAL, so the WAL
must be bounded by its own size, not by the rows written. Readers (the window's table, its aggregates) query
between the commits all the while and must not keep it from starting over.
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import threading
import time

import pytest

from helpers.events_factory import row
from helpers.fixtures_engine import OLD, cli
from helpers.slack import bound
from tenant_events.store import Batch, EventFilter, EventReader, StoreWriter
from tenant_events.store.checkpoint import WAL_BOUND

MiB = 1024 * 1024
CLEAN_STOP_MAX = 1 * MiB


def wal_of(db):
    return db.with_name(db.name + "-wal")


def wal_size(db) -> int:
    try:
        return wal_of(db).stat().st_size
    except FileNotFoundError:
        return 0


class Sampler:
    """The largest -wal file seen, sampled every few ms on a thread."""

    def __init__(self, db):
        self.db, self.largest, self._stop = db, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.wait(0.005):
            self.largest = max(self.largest, wal_size(self.db))

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return max(self.largest, wal_size(self.db))


class BusyReader:
    """What the window does between commits: the newest page, a count, a text search — on its own thread."""

    def __init__(self, db):
        self.reader, self.queries, self._stop = EventReader(db), 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        text = EventFilter(text="example")
        while not self._stop.is_set():
            self.reader.page_before(EventFilter(), None, 50)
            self.reader.count()
            self.reader.page_before(text, None, 20)
            self.queries += 3

    def close(self):
        self._stop.set()
        self._thread.join()
        self.reader.close()


def test_many_small_commits_with_busy_readers_keep_the_wal_under_its_bound(tmp_path):
    """2,500 commits of 0-3 events (a live stream's batches and heartbeats, minutes of them at ~24 events/s)."""
    db = tmp_path / "live.sqlite3"
    writer = StoreWriter(db)
    readers = [BusyReader(db), BusyReader(db)]
    sampler = Sampler(db)
    stored = 0
    try:
        for i in range(2500):
            events = [row(stored + k) for k in range(i % 4)]
            stored += len(events)
            writer.commit_sync(Batch(events=events, cursor=f"c{i}"))
            if i % 500 == 499:
                time.sleep(0.7)  # a pause: the indexer catches up (its transactions write to the WAL too)
    finally:
        for r in readers:
            r.close()
        largest = sampler.stop()
        writer.close()
    assert all(r.queries > 100 for r in readers)
    db_size = db.stat().st_size
    assert largest <= WAL_BOUND, (
        f"the WAL reached {largest / MiB:.1f} MiB beside a {db_size / MiB:.1f} MiB database"
    )
    assert wal_size(db) == 0
    with EventReader(db) as reader:
        assert reader.count() == stored and reader.cursor().offset == "c2499"


def test_closing_the_writer_while_readers_stay_open_leaves_the_wal_empty(tmp_path):
    """The window closes its readers after the writer (quit): the writer is then not the last connection, and
    SQLite's own clean-up at the last close never runs."""
    db = tmp_path / "quit.sqlite3"
    writer = StoreWriter(db)
    reader = EventReader(db)
    try:
        for i in range(300):
            writer.commit_sync(Batch(events=[row(i)], cursor=f"c{i}"))
            if i % 50 == 0:
                assert reader.count() == i + 1
        assert wal_size(db) > CLEAN_STOP_MAX  # what there was to fold in
        writer.close()
        assert wal_size(db) <= CLEAN_STOP_MAX
        assert reader.count() == 300  # the reader still reads every row
    finally:
        writer.close()
        reader.close()


def test_a_pause_in_writing_empties_the_wal(tmp_path):
    db = tmp_path / "idle.sqlite3"
    writer = StoreWriter(db)
    try:
        for i in range(200):
            writer.commit_sync(Batch(events=[row(i)], cursor=f"c{i}"))
        assert wal_size(db) > 0
        deadline = time.monotonic() + bound(10)
        while wal_size(db) and time.monotonic() < deadline:  # the indexer runs first, then the idle copy
            time.sleep(0.05)
        assert wal_size(db) == 0
    finally:
        writer.close()


def test_a_large_wal_left_by_a_crash_is_folded_in_when_the_store_opens(tmp_path):
    """A crash (or an older version) can leave a WAL of any size; the next start folds it in at once."""
    db = tmp_path / "crash.sqlite3"
    StoreWriter(db).close()
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO events (event_id, stream_offset, type, family, time, time_ms, source, tenant, purpose,"
        " summary, raw, received_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
        [tuple(row(i)) for i in range(30_000)],
    )
    conn.execute("COMMIT")
    crashed = tmp_path / "copy"
    crashed.mkdir()
    # the files as a SIGKILL would leave them: the WAL not copied back
    for name in (db.name, db.name + "-wal"):
        shutil.copy(db.with_name(name), crashed / name)
    conn.close()
    copy = crashed / db.name
    assert wal_size(copy) > WAL_BOUND
    writer = StoreWriter(copy)
    try:
        assert wal_size(copy) <= CLEAN_STOP_MAX
        with EventReader(copy) as reader:
            assert reader.count() == 30_000
    finally:
        writer.close()


def test_readers_hold_no_snapshot_between_calls(tmp_path):
    """Each reader call is its own read transaction: between calls (and while an export is suspended between
    chunks) a checkpoint that must wait for every reader finishes at once."""
    db = tmp_path / "snap.sqlite3"
    writer = StoreWriter(db)
    try:
        writer.commit_sync(Batch(events=[row(i) for i in range(30)], cursor="c"))
        text, typed = EventFilter(text="example"), EventFilter(types=frozenset({"user.created"}))
        probe = sqlite3.connect(db, isolation_level=None)
        probe.execute("PRAGMA busy_timeout = 0")
        with EventReader(db) as reader:
            export = reader.export_iter(chunk=10)
            calls = [
                lambda: reader.count(),
                lambda: reader.count(text),
                lambda: reader.count(typed, min_seq=2, max_seq=20),
                lambda: reader.page(),
                lambda: reader.page_before(text, None, 5),
                lambda: reader.page_before(typed, 20, 5),
                lambda: reader.seq_anchors(EventFilter(), 30, 7),
                lambda: reader.newer_than(EventFilter(), 3),
                lambda: reader.get(5),
                lambda: reader.find("nope"),
                lambda: reader.counts_by_type(),
                lambda: reader.histogram(EventFilter(), 60),
                lambda: reader.cursor(),
                lambda: reader.rejected(),
                lambda: reader.rejected_count(),
                lambda: reader.gaps(),
                lambda: reader.duplicates_dropped(),
                lambda: reader.range_raw(1, 10),
                lambda: next(export),  # suspended inside its first chunk
            ]
            for n, call in enumerate(calls):
                call()
                # a frame newer than the call, which a snapshot the call kept would still need
                writer.commit_sync(Batch(events=[row(100 + n)], cursor=f"c{n}"))
                busy, frames, copied = probe.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
                assert (busy, frames, copied) == (0, 0, 0), f"call {n} left a read transaction open"
        probe.close()
    finally:
        writer.close()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_the_cli_stopped_by_a_signal_leaves_at_most_1_mib_of_wal(make_simulator, tmp_path, sig):
    """`tenant-events stream --jsonl` keeps a reader open until after the writer closes, like the window."""
    sim = make_simulator(backlog=2000, rate=60, heartbeat=0.05)
    env = {"TENANT_EVENTS_ACCESS_TOKEN": sim.mint_token()}
    db = tmp_path / "tenants" / "live.sqlite3"
    proc = cli(
        "stream",
        "--base-url",
        sim.base_url,
        "--name",
        "live",
        "--data-dir",
        str(tmp_path),
        "--from-timestamp",
        OLD,
        "--jsonl",
        str(tmp_path / "live.jsonl"),
        env=env,
    )
    sampler = None
    try:
        deadline = time.monotonic() + bound(60)
        while not db.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        sampler = Sampler(db)
        # live for a while: small commits (events and heartbeat cursors) pile up in the WAL
        while wal_size(db) <= 2 * CLEAN_STOP_MAX and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
        time.sleep(2)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        largest = sampler.stop() if sampler else 0
    assert proc.returncode == 0, err
    assert largest <= WAL_BOUND
    assert wal_size(db) <= CLEAN_STOP_MAX, f"{wal_size(db) / MiB:.1f} MiB of WAL after the stop"
    assert os.path.getsize(tmp_path / "live.jsonl") > 0
