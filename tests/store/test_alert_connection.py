"""The rules' own connection stops at a database file another program removed: it would go on in a log nobody
else reads (its process then ends without closing it, and its parent starts another); it copies no log itself,
and holds each snapshot of the store for one short statement."""

from __future__ import annotations

import concurrent.futures
import os
import sqlite3
import threading

import pytest

from helpers.events_factory import row
from tenant_events.store import Batch, StoreWriter
from tenant_events.store.alert_connection import AlertConnection, FilesGone
from tenant_events.store.alerts_table import READ_SEQS


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


def test_a_catch_ups_rows_are_read_in_short_statements(tmp_path):
    """A query of the rules' holds a snapshot of the store, and the writer waits for a query that keeps its log
    from starting over (checkpoint.py): the rows of a chunk come in statements of READ_SEQS seqs, each fetched
    at once, all of them and in stored order."""
    db = tmp_path / "t.sqlite3"
    writer = StoreWriter(db)
    try:
        n = 2 * READ_SEQS + 500
        writer.commit_sync(Batch(events=[row(i) for i in range(n)], cursor="c"))
    finally:
        writer.close()
    rules = AlertConnection(db)
    reads: list[str] = []
    rules._conn.set_trace_callback(lambda sql: reads.append(sql) if "FROM events" in sql else None)
    try:
        segments = rules.run_alert_job(lambda ledger: ledger.rows(0, n, None, ())).result()
    finally:
        rules.close()
    assert [r[11] for _first, rows in segments for r in rows] == list(range(1, n + 1))
    assert len(reads) == 3


def test_a_handed_ledger_reads_rows_and_writes_where_its_hand_runs_them(tmp_path):
    """A catch-up's thread runs at the lowest priority: a transaction or a snapshot it held would last as long as
    the machine kept it from a core, and the writer waited for it. Its reads of rows and its transactions run on
    the thread its hand gives (the loop's, at the parent's priority); its other reads where it asks."""
    db = tmp_path / "t.sqlite3"
    writer = StoreWriter(db)
    try:
        writer.commit_sync(Batch(events=[row(i) for i in range(10)], cursor="c"))
    finally:
        writer.close()
    rules = AlertConnection(db)
    owner = concurrent.futures.ThreadPoolExecutor(1)
    on: list[tuple[str, int]] = []

    def hand(work):
        return owner.submit(work).result()

    rules._conn.set_trace_callback(lambda sql: on.append((sql.split()[0], threading.get_ident())))

    def step(ledger):
        ledger.newest_seq()
        ledger.rows(0, 10, None, ())
        ledger.commit([], 0, 10)
        return threading.get_ident()

    try:
        here = rules.run_alert_job(step, hand).result()
        there = owner.submit(threading.get_ident).result()
    finally:
        rules.close()
        owner.shutdown()
    assert [(word, here if ident == here else there if ident == there else ident) for word, ident in on] == [
        ("SELECT", here),  # the newest seq
        ("SELECT", there),  # the rows
        ("BEGIN", there),  # the alerts and the watermark
        ("UPDATE", there),
        ("COMMIT", there),
    ]
