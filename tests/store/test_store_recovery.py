"""The store after another program removed its write-ahead log: the writer says so in words, opens the database
again (every connection of the process closed first, readers and the outbox included, so none takes up the
removed wal-index), and the stream resumes from the cursor in the file. Quit after a failure never raises."""

from __future__ import annotations

import os
import threading

import pytest

from helpers.events_factory import row
from tenant_events.errors import StorageError
from tenant_events.store import Batch, EventReader, StoreWriter
from tenant_events.store.alerts_inbox import AlertInbox
from tenant_events.store.connections import open_count
from tenant_events.store.outbox import Outbox

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
