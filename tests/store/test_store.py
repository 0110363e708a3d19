"""Store: one transaction per batch, dedupe, search, paging, retention, corrupt and newer files."""

from __future__ import annotations

import sqlite3
import sys
import time
from datetime import UTC, datetime

import pytest

from helpers.events_factory import row
from tenant_events.errors import StorageError
from tenant_events.store import Batch, EventFilter, EventReader, GapMarker, RejectedRow, StoreWriter
from tenant_events.store.archive_keeper import keep
from tenant_events.store.writer import SWITCH_INTERVAL
from tenant_events.values.retention import Retention


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "tenants" / "demo.sqlite3"
    writer = StoreWriter(path)
    yield writer, path
    writer.close()


def test_batch_and_cursor_commit_together_and_duplicates_are_counted(db):
    writer, path = db
    first = writer.commit_sync(Batch(events=[row(i) for i in range(5)], cursor="off-4"))
    assert (first.inserted, first.duplicates, first.first_seq, first.last_seq) == (5, 0, 1, 5)
    again = writer.commit_sync(Batch(events=[row(3), row(4), row(5), row(5)], cursor="off-5"))
    assert (again.inserted, again.duplicates) == (1, 3)
    with EventReader(path) as reader:
        # A skipped duplicate uses up a seq (AUTOINCREMENT): the new row's seq lies in first_seq..last_seq and
        # last_seq is the seq it really got.
        newest = reader.page(limit=1)[0].seq
        assert again.first_seq == 6 and again.last_seq == newest > 6
        assert reader.count() == 6
        assert reader.cursor().offset == "off-5"
        assert reader.duplicates_dropped() == 3
        assert [e.offset for e in reader.page(limit=3)] == ["off-00000005", "off-00000004", "off-00000003"]
        assert [e.event_id for e, _ in reader.export_iter(chunk=4)] == [row(i).event_id for i in range(6)]


def test_a_large_batch_keeps_stream_order_and_drops_duplicates_across_its_statements(db):
    """The writer splits a batch into multi-row INSERTs of 1000/100/20/5/1 rows: order and dedupe span them."""
    writer, path = db
    writer.commit_sync(Batch(events=[row(i) for i in range(0, 1300, 100)], cursor="a"))  # 13 stored before
    order = [
        *range(0, 700),
        3,
        650,
        499,
        500,
        1200,
        *range(700, 1333),
        1100,
        *range(1400, 1530),
    ]  # repeats inside and across chunks
    result = writer.commit_sync(Batch(events=[row(i) for i in order], cursor="b"))
    unique_new = [i for i in dict.fromkeys(order) if not (i % 100 == 0 and i < 1300)]
    assert (result.inserted, result.duplicates) == (len(unique_new), len(order) - len(unique_new))
    with EventReader(path) as reader:
        stored = [e.event_id for e, _ in reader.export_iter()]
    assert stored == [row(i).event_id for i in range(0, 1300, 100)] + [row(i).event_id for i in unique_new]


def test_a_failed_batch_leaves_neither_events_nor_cursor(db):
    writer, path = db
    writer.commit_sync(Batch(events=[row(0)], cursor="off-0"))
    broken = row(1)._replace(type=None)  # NOT NULL violation inside the transaction
    with pytest.raises(sqlite3.IntegrityError):
        writer.commit_sync(Batch(events=[row(2), broken], cursor="off-2"))
    with EventReader(path) as reader:
        assert reader.count() == 1 and reader.cursor().offset == "off-0"


def test_rejected_and_gaps_are_kept(db):
    writer, path = db
    writer.commit_sync(
        Batch(
            events=[row(0)], rejected=[RejectedRow("user.created", "off-x", "data: bad", "{")], cursor="off-x"
        )
    )
    writer.commit_sync(
        Batch(gap=GapMarker("cursor expired", resumed_from="2026-11-01T00:00:00Z", lost_cursor="off-x"))
    )
    with EventReader(path) as reader:
        [rej] = reader.rejected()
        assert (rej.offset, rej.reason, rej.raw) == ("off-x", "data: bad", "{")
        [gap] = reader.gaps()
        assert (gap.reason, gap.after_seq, gap.lost_cursor) == ("cursor expired", 1, "off-x")
        assert reader.cursor().offset == "off-x"


def test_filters_search_counts_and_histogram(db):
    writer, path = db
    rows = [row(i, type_="user.created" if i % 2 else "organization.created") for i in range(40)]
    rows.insert(0, row(40, email='o"brien*:AND-x_%@example.com', purpose="test"))
    writer.commit_sync(Batch(events=rows[:20], cursor="a"))
    writer.index_all_sync()
    writer.commit_sync(Batch(events=rows[20:], cursor="b"))  # not indexed yet: found via the tail scan
    with EventReader(path) as reader:
        assert reader.count(EventFilter(types=frozenset({"user.created"}))) == 21
        assert reader.count(EventFilter(include_test=False)) == 40
        assert reader.count(EventFilter(text="user7@example")) == 1
        assert reader.count(EventFilter(text="user3")) == 6  # prefix match: user3, user31, user33...
        assert reader.count(EventFilter(text='o"brien*:AND-x_%')) == 1  # FTS syntax is plain text
        assert reader.count(EventFilter(text="100%")) == 0
        assert reader.count(EventFilter(since=datetime(2026, 11, 1, 0, 0, 10, tzinfo=UTC))) == 31
        assert reader.counts_by_type() == {"user.created": 21, "organization.created": 20}
        hist = reader.histogram(EventFilter(), 10)
        assert sum(sum(v.values()) for _, v in hist) == 41 and hist[0][1] == {
            "user": 5,
            "organization": 5,
            "group": 0,
        }
        newest = reader.page_before(EventFilter(), None, 5)
        older = reader.page_before(EventFilter(), newest[-1].seq, 5)
        assert [e.seq for e in newest + older] == list(range(41, 31, -1))
        assert reader.find(rows[3].event_id).raw == rows[3].raw
        writer.index_all_sync()
        assert reader.count(EventFilter(text="user7@example")) == 1


def test_retention_moves_beyond_the_live_cap_then_ages_out_and_search_stays_consistent(db):
    writer, path = db
    now = time.time()  # stored now: only the cap makes them move at first
    writer.commit_sync(Batch(events=[row(i)._replace(received_at=now) for i in range(50)], cursor="c"))
    writer.index_all_sync()
    done = keep(writer, Retention(keep_live_days=3650, max_live_rows=30, settle_seconds=0))
    assert done.moved == 20
    with EventReader(path) as reader:
        assert reader.count() == 50 and reader.archived_upto() == 20
        assert reader.count(EventFilter(text="user45")) == 1 and reader.count(EventFilter(text="user5")) == 1
    # events of 2026-11-01: older than a day in both tiers, so moved, then deleted with their archive files
    done = keep(writer, Retention(keep_live_days=1, keep_archive_days=1, settle_seconds=0))
    assert done.moved == 30 and done.expired
    with EventReader(path) as reader:
        assert reader.count() == 0 and reader.count(EventFilter(text="user45")) == 0
    writer.commit_sync(Batch(events=[row(60)], cursor="d"))
    with EventReader(path) as reader:
        assert reader.page()[0].seq == 51  # stored order never reuses a number


@pytest.mark.expect_warning_logs
def test_corrupt_file_is_moved_aside_and_reported(tmp_path):
    path = tmp_path / "demo.sqlite3"
    path.write_bytes(b"SQLite format 3\x00" + b"\x13" * 4096)
    writer = StoreWriter(path)
    try:
        assert writer.notice is not None and writer.notice.moved_to is not None
        assert writer.notice.moved_to.exists() and "corrupt-" in writer.notice.moved_to.name
        writer.commit_sync(Batch(events=[row(1)], cursor="x"))
    finally:
        writer.close()


def test_newer_schema_is_refused_with_the_version_named(tmp_path):
    path = tmp_path / "demo.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.raises(StorageError, match="schema 99"):
        StoreWriter(path)


def test_a_database_that_cannot_be_opened_is_reported_not_moved_aside(tmp_path):
    path = tmp_path / "demo.sqlite3"
    path.mkdir()  # not a file: "unable to open database file" — an environment problem, not corruption
    with pytest.raises(StorageError, match="cannot open the event database"):
        StoreWriter(path)
    assert path.is_dir() and not list(tmp_path.glob("*corrupt*"))


def test_a_catch_up_batch_of_several_statements_is_stored_in_stream_order(db):
    """A batch goes in as a few multi-row statements of fixed sizes (the largest takes 2,000 rows): whatever the
    split, the rows keep the stream's order as their seq and the result names their range."""
    writer, path = db
    rows = [row(i) for i in range(3127)]  # 2,000 + 1,000 + 100 + 20 + 5 + 2 × 1
    result = writer.commit_sync(Batch(events=rows, cursor=rows[-1].offset))
    assert (result.inserted, result.first_seq, result.last_seq) == (3127, 1, 3127)
    with EventReader(path) as reader:
        stored = reader.page(limit=4000)
        assert [(e.seq, e.offset) for e in reversed(stored)] == [
            (i + 1, r.offset) for i, r in enumerate(rows)
        ]
        assert reader.cursor().offset == rows[-1].offset


def test_a_writer_takes_the_interpreter_lock_back_sooner_and_never_later(tmp_path):
    """The writer's thread asks for the lock after each SQLite call while the engine decodes: the switch interval
    is how long it may wait each time (writer.py SWITCH_INTERVAL). Shortened for the process, never lengthened."""
    before = sys.getswitchinterval()
    try:
        sys.setswitchinterval(0.005)  # CPython's default
        StoreWriter(tmp_path / "a.sqlite3").close()
        assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL)
        sys.setswitchinterval(SWITCH_INTERVAL / 5)  # someone chose shorter still
        StoreWriter(tmp_path / "b.sqlite3").close()
        assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL / 5)
    finally:
        sys.setswitchinterval(before)
