"""The alert tables (schema 3): the watermark moves with the alerts in one transaction and only from where the
evaluator read it; an upgraded database starts its watermark at its newest event; the inbox reads and marks."""

from __future__ import annotations

import sqlite3

import pytest

from helpers.events_factory import row
from tenant_events.alerts.rule_engine import eval_rows
from tenant_events.store import AlertInbox, AlertWrite, Batch, StoreWriter, WatermarkMoved
from tenant_events.store.schema import _V1, _V2, _split


def _write(rule_id="r", alert_id=None, first=1, last=1, seqs=(1,)):
    return AlertWrite(
        alert_id=alert_id,
        rule_id=rule_id,
        rule_name=rule_id.title(),
        severity="warning",
        tenant="demo",
        catch_up=False,
        notify=True,
        occurrences=1,
        event_count=len(seqs),
        first_seq=first,
        last_seq=last,
        first_event_id="evt_a",
        last_event_id="evt_b",
        first_time="2026-11-01T00:00:00.000Z",
        last_time="2026-11-01T00:00:01.000Z",
        last_time_ms=1,
        type_counts={"user.deleted": len(seqs)},
        detail="d",
        raised_at=100.0,
        updated_at=100.0,
        new_seqs=list(seqs),
    )


def test_alerts_and_watermark_commit_together_and_compare_and_set(tmp_path):
    writer = StoreWriter(tmp_path / "t.sqlite3")
    try:
        writer.commit_sync(Batch(events=[row(i) for i in range(5)], cursor="c"))
        assert writer.run_alert_job(lambda ledger: (ledger.watermark(), ledger.newest_seq())).result() == (
            0,
            5,
        )
        rows = list(
            eval_rows(
                writer.run_alert_job(lambda ledger: ledger.rows(1, 4, {"user.created"}, set())).result()
            )
        )
        assert [r.seq for r in rows] == [2, 3, 4]
        rows = list(
            eval_rows(writer.run_alert_job(lambda ledger: ledger.rows(0, 5, None, {"user.created"})).result())
        )
        assert rows[0].raw == row(0).raw and rows[0].time_ms == row(0).time_ms

        ids = writer.run_alert_job(lambda ledger: ledger.commit([_write(seqs=(1, 2))], 0, 5)).result()
        assert ids == [1]
        # a second evaluator that still believes the watermark is 0 writes nothing at all
        with pytest.raises(WatermarkMoved):
            writer.run_alert_job(lambda ledger: ledger.commit([_write("other")], 0, 5)).result()
        update = _write(alert_id=1, last=5, seqs=(5,))
        assert writer.run_alert_job(lambda ledger: ledger.commit([update], 5, 5)).result() == [1]
        latest = writer.run_alert_job(lambda ledger: ledger.latest_alerts()).result()
        assert [(a.id, a.rule_id, a.last_seq) for a in latest] == [(1, "r", 5)]
    finally:
        writer.close()
    with AlertInbox(tmp_path / "t.sqlite3") as inbox:
        [alert] = inbox.alerts()
        assert (alert.rule_id, alert.event_count, alert.type_counts, alert.read) == (
            "r",
            1,
            {"user.deleted": 1},
            False,
        )
        assert inbox.event_seqs(1) == [1, 2, 5]
        assert inbox.unread_count() == 1
        assert inbox.mark_read([1]) == 1 and inbox.mark_read([1]) == 0
        assert inbox.unread_count() == 0 and inbox.get(1).read


def test_a_failed_alert_transaction_leaves_watermark_and_alerts_as_they_were(tmp_path):
    writer = StoreWriter(tmp_path / "t.sqlite3")
    try:
        writer.commit_sync(Batch(events=[row(i) for i in range(3)], cursor="c"))
        bad = _write()
        bad.severity = "loud"  # type: ignore[assignment]  # the CHECK constraint refuses it mid-transaction
        with pytest.raises(sqlite3.IntegrityError):
            writer.run_alert_job(lambda ledger: ledger.commit([_write("ok"), bad], 0, 3)).result()
        assert writer.run_alert_job(lambda ledger: (ledger.watermark(), ledger.latest_alerts())).result() == (
            0,
            [],
        )
    finally:
        writer.close()


def test_an_upgraded_database_starts_evaluating_after_its_stored_events(tmp_path):
    path = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    for statement in _split(_V1) + _split(_V2):
        conn.execute(statement)
    conn.execute("PRAGMA user_version = 2")
    for i in range(7):
        r = row(i)
        conn.execute(f"INSERT INTO events VALUES (NULL, {','.join('?' * len(r))})", r)
    conn.close()
    writer = StoreWriter(path)
    try:
        assert writer.run_alert_job(lambda ledger: ledger.watermark()).result() == 7
    finally:
        writer.close()
    fresh = StoreWriter(tmp_path / "new.sqlite3")
    try:
        assert fresh.run_alert_job(lambda ledger: ledger.watermark()).result() == 0
    finally:
        fresh.close()


def test_inbox_lists_by_latest_firing_and_marks_all_read_up_to_what_was_seen(tmp_path):
    writer = StoreWriter(tmp_path / "t.sqlite3")
    try:
        writer.commit_sync(Batch(events=[row(0)], cursor="c"))
        writes = [_write(f"r{i}") for i in range(4)]
        for w, t in zip(writes, (10.0, 20.0, 30.0, 40.0), strict=True):
            w.raised_at = w.updated_at = w.fired_at = t
        writer.run_alert_job(lambda ledger: ledger.commit(writes, 0, 1)).result()
    finally:
        writer.close()
    with AlertInbox(tmp_path / "t.sqlite3") as inbox:
        assert [a.rule_id for a in inbox.alerts()] == ["r3", "r2", "r1", "r0"]
        assert [a.rule_id for a in inbox.alerts(since=25.0)] == ["r3", "r2"]
        assert [a.rule_id for a in inbox.alerts(limit=1)] == ["r3"]
        assert inbox.mark_all_read(fired_upto=20.0) == 2
        assert [a.rule_id for a in inbox.alerts(unread_only=True)] == ["r3", "r2"]
        assert inbox.mark_all_read() == 2 and inbox.unread_count() == 0


def test_a_firing_folded_into_an_old_alert_brings_it_to_the_top_unread(tmp_path):
    writer = StoreWriter(tmp_path / "t.sqlite3")
    try:
        writer.commit_sync(Batch(events=[row(i) for i in range(3)], cursor="c"))
        writes = [_write(f"r{i}") for i in range(3)]
        for w, t in zip(writes, (10.0, 20.0, 30.0), strict=True):
            w.raised_at = w.updated_at = w.fired_at = t
        ids = writer.run_alert_job(lambda ledger: ledger.commit(writes, 0, 1)).result()
        with AlertInbox(tmp_path / "t.sqlite3") as inbox:
            inbox.mark_all_read()
        again = _write("r0")
        again.alert_id, again.occurrences, again.reopen, again.fired_at = ids[0], 2, True, 50.0
        writer.run_alert_job(lambda ledger: ledger.commit([again], 1, 2)).result()
    finally:
        writer.close()
    with AlertInbox(tmp_path / "t.sqlite3") as inbox:
        assert [(a.rule_id, a.read, a.version) for a in inbox.alerts()] == [
            ("r0", False, 2),
            ("r2", True, 1),
            ("r1", True, 1),
        ]


def test_history_rows_walk_a_time_range_in_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr("tenant_events.store.event_history.CHUNK", 7)
    writer = StoreWriter(tmp_path / "t.sqlite3")
    try:
        writer.commit_sync(Batch(events=[row(i) for i in range(30)], cursor="c"))
    finally:
        writer.close()
    with AlertInbox(tmp_path / "t.sqlite3") as inbox:
        all_rows = list(eval_rows(inbox.history_rows(0, 2**62, None, set())))
        assert [r.seq for r in all_rows] == list(range(1, 31))
        some = list(
            eval_rows(inbox.history_rows(row(5).time_ms, row(25).time_ms, {"user.created"}, {"user.created"}))
        )
        assert [r.seq for r in some] == list(range(6, 26)) and some[0].raw == row(5).raw


def test_an_alerts_names_bring_the_directory_up_only_when_it_is_a_little_behind(tmp_path, monkeypatch):
    from tenant_events.store import directory
    from tenant_events.store import writer as writer_module
    from tenant_events.store.alerts_table import NAMES_CATCH_UP

    for name in (
        "IDLE_BEFORE_INDEXING",
        "INDEX_AT_LEAST_EVERY",
    ):  # the idle-time indexer stays out of the way
        monkeypatch.setattr(writer_module, name, 3600.0)
    for n, caught_up in ((NAMES_CATCH_UP + 1000, False), (NAMES_CATCH_UP - 10, True)):
        writer = StoreWriter(tmp_path / f"t{n}.sqlite3")
        try:  # one catch-up batch: left to the idle-time indexer
            writer.commit_sync(Batch(events=[row(i) for i in range(n)], cursor="c"))
            upto = writer.run_alert_job(
                lambda ledger: (ledger.directory(), directory.watermark(ledger._conn))[1]
            ).result()
            assert (upto == n) is caught_up, (n, upto)  # far behind: a long catch-up is left alone
        finally:
            writer.close()
