"""The store after another program removed its write-ahead log: the writer says so in words, opens the database
again (every connection of the process closed first, readers and the outbox included, so none takes up the
removed wal-index), and the stream resumes from the cursor in the file. Quit after a failure never raises."""

from __future__ import annotations

import os
import threading
import time

import pytest

from helpers.events_factory import row
from helpers.slack import bound
from tenant_events.errors import StorageError
from tenant_events.store import Batch, EventReader, StoreWriter
from tenant_events.store.alerts_inbox import AlertInbox
from tenant_events.store.connections import HeldConnection, open_count
from tenant_events.store.outbox import Outbox
from tenant_events.store.schema import connect, small_reader

pytestmark = pytest.mark.expect_warning_logs


def batch(first: int, n: int) -> Batch:
    return Batch(events=[row(i) for i in range(first, first + n)], cursor=f"c{first + n}")


def remove_log(db) -> None:
    """What `rm` or a cleaning tool does: no descriptor, just the names gone."""
    for suffix in ("-wal", "-shm"):
        os.remove(db.with_name(db.name + suffix))


def commit_until_refused(writer: StoreWriter, first: int) -> StorageError:
    with pytest.raises(StorageError) as info:
        writer.commit_sync(batch(first, 10))
    return info.value


def test_a_removed_log_is_said_the_database_reopened_and_the_stream_resumes_from_the_stored_cursor(tmp_path):
    db = tmp_path / "acme.sqlite3"
    with_file = StoreWriter(db)
    with_file.commit_sync(batch(0, 100))
    with_file.close()  # a clean stop: these 100 are in the database file
    writer = StoreWriter(db)
    reader, inbox, outbox = EventReader(db), AlertInbox(db), Outbox(db)
    try:
        assert reader.count() == 100
        writer.commit_sync(batch(100, 50))  # in the WAL (until an idle second copies it)
        remove_log(db)
        refused = commit_until_refused(writer, 150)
        assert "was removed or replaced by another program" in str(refused), str(refused)
        assert "opens the database again" in str(refused), str(refused)
        with pytest.raises(StorageError):  # every batch behind the failed one is refused too
            writer.commit_sync(batch(150, 10))
        stored = writer.resume_after_failure()
        # What only the removed log held is copied into the file when the writer closes it (no other process
        # had it open), or is gone with the cursor that came with it; either way the stream asks for the rest.
        assert stored.offset in ("c100", "c150", "c160"), stored
        resume_at = int(str(stored.offset)[1:])
        writer.commit_sync(batch(resume_at, 160 - resume_at))
        for side in ("-wal", "-shm"):
            assert db.with_name(db.name + side).exists()
        # The readers opened again behind the writer, on the new files: they see what it stores.
        assert reader.count() == 160
        assert inbox.alerts() == []
        assert outbox.unrouted() == []
        with EventReader(db) as fresh:
            assert [e.event_id for e, _ in fresh.export_iter()] == [row(i).event_id for i in range(160)]
    finally:
        writer.close()
        reader.close()
        inbox.close()
        outbox.close()
    assert open_count(db) == 0


def test_a_reader_busy_on_another_thread_is_let_go_between_its_queries(tmp_path):
    db = tmp_path / "acme.sqlite3"
    writer = StoreWriter(db)
    reader = EventReader(db)
    stop, counted, failures = threading.Event(), [0], []

    def read() -> None:
        while not stop.is_set():
            try:
                reader.count()
                counted[0] += 1
            except Exception as exc:
                failures.append(repr(exc))

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    try:
        writer.commit_sync(batch(0, 100))
        remove_log(db)
        commit_until_refused(writer, 100)
        writer.resume_after_failure()
        writer.commit_sync(batch(0, 200))
        before = counted[0]
        while counted[0] < before + 50 and thread.is_alive():
            stop.wait(0.01)
    finally:
        stop.set()
        thread.join()
        writer.close()
        reader.close()
    assert failures == []
    with EventReader(db) as fresh:
        assert fresh.count() == 200


def test_closing_a_writer_whose_log_was_removed_does_not_raise(tmp_path):
    db = tmp_path / "acme.sqlite3"
    writer = StoreWriter(db)
    writer.commit_sync(batch(0, 10))
    remove_log(db)
    commit_until_refused(writer, 10)
    writer.close()  # quit, without reopening first


@pytest.mark.parametrize("removed", [("",), ("", "-wal", "-shm")], ids=["the file", "all three"])
def test_a_removed_database_file_is_written_back_from_the_connection_that_has_it_open(tmp_path, removed):
    db = tmp_path / "acme.sqlite3"
    writer = StoreWriter(db)
    reader = EventReader(db)
    try:
        writer.commit_sync(batch(0, 100))
        for suffix in removed:
            os.remove(db.with_name(db.name + suffix))
        refused = commit_until_refused(writer, 100)  # stored in what the writer has open, then written back
        assert f"the event database {db} was removed by another program" in str(refused), str(refused)
        assert "writes it back" in str(refused), str(refused)
        stored = writer.resume_after_failure()
        assert stored.offset == "c110", stored  # nothing lost: the cursor of the last commit
        writer.commit_sync(batch(110, 10))
        assert reader.count() == 120
    finally:
        writer.close()
        reader.close()
    with EventReader(db) as fresh:
        assert [e.event_id for e, _ in fresh.export_iter()] == [row(i).event_id for i in range(120)]
    assert not list(tmp_path.glob(".acme*")), "the copy's spare name is gone"


def test_a_replaced_database_file_is_said_and_the_new_file_used(tmp_path):
    db, other = tmp_path / "acme.sqlite3", tmp_path / "restored.sqlite3"
    backup = StoreWriter(other)
    backup.commit_sync(batch(0, 40))  # a copy the user restores: older than what the writer holds
    backup.close()
    writer = StoreWriter(db)
    try:
        writer.commit_sync(batch(0, 100))
        os.replace(other, db)
        refused = commit_until_refused(writer, 100)
        assert f"the event database {db} was replaced by another file" in str(refused), str(refused)
        assert writer.resume_after_failure().offset == "c40"  # the stream asks for the rest
        writer.commit_sync(batch(40, 80))
    finally:
        writer.close()
    with EventReader(db) as fresh:
        assert fresh.count() == 120


def test_a_log_removed_while_the_writer_is_idle_is_opened_again_without_a_write(tmp_path):
    db = tmp_path / "acme.sqlite3"
    writer = StoreWriter(db)
    try:
        writer.commit_sync(batch(0, 100))
        wal = db.with_name(db.name + "-wal")
        deadline = time.monotonic() + bound(10)
        while (
            wal.stat().st_size and time.monotonic() < deadline
        ):  # the idle second emptied it: nothing to write
            time.sleep(0.05)
        remove_log(db)
        # A paused stream, a quiet tenant: no write comes, yet a triage action or a window's reader must not
        # be told "try again in a moment" for ever. The writer looks at its files while idle and reopens.
        deadline = time.monotonic() + bound(10)
        while time.monotonic() < deadline and not all(
            db.with_name(db.name + s).exists() for s in ("-wal", "-shm")
        ):
            time.sleep(0.05)
        assert all(db.with_name(db.name + s).exists() for s in ("-wal", "-shm")), "not opened again"
        with EventReader(db) as reader:
            assert reader.count() == 100
        # The stream is told all the same: its next batch is refused with the words, and it resumes.
        refused = commit_until_refused(writer, 100)
        assert "acme.sqlite3-wal was removed or replaced by another program" in str(refused), str(refused)
        assert writer.resume_after_failure().offset == "c100"
        writer.commit_sync(batch(100, 10))
    finally:
        writer.close()


def test_a_holder_that_opens_as_the_writer_begins_its_reopen_closes_that_connection_and_opens_again(tmp_path):
    db = tmp_path / "acme.sqlite3"
    writer = StoreWriter(db)
    writer.commit_sync(batch(0, 100))
    made, go_on, armed = threading.Event(), threading.Event(), [False]

    def opener():
        conn = small_reader(db)
        if armed[0]:  # made before the writer began its reopen, handed over after it did
            armed[0] = False
            made.set()
            go_on.wait(bound(30))
        return conn

    held = HeldConnection(db, opener)
    held.let_go()
    armed[0] = True
    counts: list[object] = []

    def read() -> None:
        try:
            with held.lock:
                counts.append(held.conn.execute("SELECT count(*) FROM events").fetchone()[0])
        except Exception as exc:
            counts.append(repr(exc))

    reading = threading.Thread(target=read)
    reading.start()
    assert made.wait(bound(30))
    remove_log(db)
    refusal: list[StorageError] = []
    committing = threading.Thread(target=lambda: refusal.append(commit_until_refused(writer, 100)))
    committing.start()
    try:
        deadline = time.monotonic() + bound(30)
        while writer.wal is not None and time.monotonic() < deadline:  # the writer has closed its connection
            time.sleep(0.01)
        go_on.set()
        committing.join()
        reading.join()
        # The writer's first reopen did not wait in vain for that connection: it is open again at once.
        assert writer.wal is not None, "the reopen waited for the holder's connection and gave up"
        assert counts == [110], (
            counts
        )  # read once the writer had the file open again (the refused batch is in)
        assert writer.resume_after_failure().offset == "c110"
        writer.commit_sync(batch(110, 10))
        with held.lock:
            assert held.conn.execute("SELECT count(*) FROM events").fetchone()[0] == 120
    finally:
        go_on.set()
        held.close()
        writer.close()
    assert open_count(db) == 0


def test_new_connections_are_refused_while_a_failed_reopen_waits_for_a_lingering_one(tmp_path):
    db = tmp_path / "acme.sqlite3"
    writer = StoreWriter(db)
    lingering = connect(db)  # a short-lived connection (a triage action) that outlives the removal
    try:
        writer.commit_sync(batch(0, 100))
        lingering.execute("SELECT count(*) FROM events").fetchone()
        remove_log(db)
        commit_until_refused(writer, 100)  # the reopen waited LET_GO_WAIT_S for `lingering`, and gave up
        with pytest.raises(StorageError) as info:  # it would take up the removed wal-index beside `lingering`
            EventReader(db)
        assert "was removed or replaced by another program" in str(info.value), str(info.value)
        lingering.close()
        stored = writer.resume_after_failure()
        writer.commit_sync(batch(int(str(stored.offset)[1:]), 10))
        with EventReader(db) as reader:
            assert reader.count() == int(str(stored.offset)[1:]) + 10
    finally:
        lingering.close()
        writer.close()
    assert open_count(db) == 0
