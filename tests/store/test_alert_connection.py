"""The rules' own connection stops at a database file another program removed: it would go on in a log nobody
else reads (its process then ends without closing it, and its parent starts another)."""

from __future__ import annotations

import os
import sqlite3
import threading

import pytest

from helpers.slack import bound
from tenant_events.store import StoreWriter
from tenant_events.store.alert_connection import AlertConnection, FilesGone
from tenant_events.store.checkpoint import WalLimits


def test_a_removed_log_refuses_the_next_step(tmp_path):
    db = tmp_path / "t.sqlite3"
    StoreWriter(db).close()
    rules = AlertConnection(db)  # (its first read makes the -wal and -shm)
    try:
        assert rules.run_alert_job(lambda ledger: ledger.watermark()).result() == 0
        wal = tmp_path / "t.sqlite3-wal"
        assert wal.exists()
        wal.rename(tmp_path / "moved-away")  # another program's doing
        with pytest.raises(FilesGone, match=r"t\.sqlite3-wal is no longer the file"):
            rules.run_alert_job(lambda ledger: ledger.watermark()).result()
    finally:
        rules.close()


def test_the_rules_commits_leave_copying_the_log_to_the_writer(tmp_path):
    """SQLite's own checkpoint after a commit of the rules' connection would copy the store's frames at the rules'
    lower priority, holding the one checkpoint lock the writer's steps need: theirs failed "busy" and the log grew
    past its bound. The rules' commits copy nothing; the database file stays as the writer left it."""
    db = tmp_path / "t.sqlite3"
    StoreWriter(db).close()
    other = sqlite3.connect(
        db, isolation_level=None
    )  # frames nobody copied yet: more than SQLite's 1,000 pages
    other.execute("PRAGMA wal_autocheckpoint = 0")
    other.execute("CREATE TABLE filler (x BLOB)")
    other.executemany("INSERT INTO filler VALUES (?)", [(os.urandom(4000),) for _ in range(1500)])
    before = db.stat().st_size
    rules = AlertConnection(db)
    try:
        assert rules.run_alert_job(lambda ledger: ledger.commit([], 0, 5)).result() == []  # (a page written)
        assert db.stat().st_size == before
    finally:
        rules.close()
        other.close()


def test_a_catch_ups_read_waits_while_the_log_is_past_the_writers_restart_step(tmp_path):
    """A read begun while the writer copies the log holds the frames it may not pass, and the log cannot start
    over while it lasts: at the rules' lower priority on a busy machine it lasted long, and the writer let the log
    grow past its bound or waited for it. A catch-up's read waits for the log to start over; a live one does not
    wait."""
    db = tmp_path / "t.sqlite3"
    StoreWriter(db).close()
    limits = WalLimits(background=256 * 1024, restart=1024 * 1024)
    wal = tmp_path / "t.sqlite3-wal"
    other = sqlite3.connect(db, isolation_level=None)  # the writer: frames past the restart step
    other.execute("PRAGMA wal_autocheckpoint = 0")
    other.execute("CREATE TABLE filler (x BLOB)")
    other.executemany("INSERT INTO filler VALUES (?)", [(os.urandom(4000),) for _ in range(400)])
    assert wal.stat().st_size > limits.restart
    rules = AlertConnection(db, limits, checkpoint_wait_s=bound(60))
    seen = []  # the log's size as each read of rows began
    rules._conn.set_trace_callback(
        lambda sql: seen.append(wal.stat().st_size) if "FROM events" in sql else None
    )
    try:
        rules.run_alert_job(lambda ledger: ledger.rows(0, 10, None, ())).result()  # live: at once
        assert seen == [wal.stat().st_size] and seen[0] > limits.restart
        done = threading.Event()
        reader = threading.Thread(
            target=lambda: (
                rules.run_alert_job(lambda ledger: ledger.rows(0, 10, None, ()), catch_up=True),
                done.set(),
            )
        )
        reader.start()
        assert not done.wait(0.3)
        other.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the writer starts the log over
        reader.join(bound(60))
        assert done.is_set() and len(seen) == 2 and seen[1] < limits.restart
    finally:
        rules.close()
        other.close()
