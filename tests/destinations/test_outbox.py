"""The outbox row is written in the alert's own transaction: a failed commit leaves neither; a firing folded into
an open alert is a new version with a delivery of its own, more events of the same firing are not."""

from __future__ import annotations

import sqlite3

import pytest

from helpers.deliveries import alert_write, run_worker, store_alerts
from helpers.events_factory import row
from tenant_events.store import Batch, StoreWriter
from tenant_events.store.schema import connect


def _outbox(db):
    conn = connect(db, readonly=True)
    try:
        return conn.execute(
            "SELECT alert_id, version FROM alert_outbox ORDER BY alert_id, version"
        ).fetchall()
    finally:
        conn.close()


def test_outbox_rows_come_and_go_with_their_alerts(tmp_path):
    db = tmp_path / "acme.sqlite3"
    ids = store_alerts(db, [alert_write(), alert_write("other")])
    assert _outbox(db) == [(ids[0], 1), (ids[1], 1)]
    writer = StoreWriter(db)
    try:
        writer.commit_sync(Batch(events=[row(i) for i in range(2, 4)], cursor="c2"))
        update = alert_write()
        update.alert_id, update.occurrences, update.reopen, update.new_seqs = ids[0], 2, True, [3]
        bad = alert_write("third")
        bad.severity = "loud"  # type: ignore[assignment]  # the CHECK constraint refuses it mid-transaction
        with pytest.raises(sqlite3.IntegrityError):
            writer.run_alert_job(lambda ledger: ledger.commit([alert_write("fourth"), bad], 2, 4)).result()
        assert _outbox(db) == [(ids[0], 1), (ids[1], 1)]  # the rolled-back alert left no outbox row
        writer.run_alert_job(lambda ledger: ledger.commit([update], 2, 4)).result()
        assert _outbox(db) == [(ids[0], 1), (ids[0], 2), (ids[1], 1)]  # version 2: said again
        writer.commit_sync(Batch(events=[row(i) for i in range(4, 6)], cursor="c3"))
        grown = alert_write()
        grown.alert_id, grown.occurrences, grown.new_seqs = ids[0], 2, [5]  # the same firing, one more event
        writer.run_alert_job(lambda ledger: ledger.commit([grown], 4, 6)).result()
    finally:
        writer.close()
    assert _outbox(db) == [(ids[0], 1), (ids[0], 2), (ids[1], 1)]  # no new version: no new delivery


def test_a_stopped_worker_leaves_no_thread_behind(tmp_path):
    """The outbox's database thread ends with the worker's run, not whenever the worker is garbage collected (a
    quit that left it running was seen as "threads left behind: outbox_0" under load)."""
    import threading

    from helpers.deliveries import run_worker, store_alerts

    db = tmp_path / "acme.sqlite3"
    store_alerts(db, [])
    before = {t.ident for t in threading.enumerate()}
    worker = run_worker(db, {}, until=lambda: True)
    left = [t for t in threading.enumerate() if t.ident not in before and t.name.startswith("outbox")]
    assert left == [], left
    del worker


def test_a_worker_told_to_stop_ends_after_the_send_in_flight(tmp_path):
    """A relay or app stopping while a slow receiver holds a page of deliveries stops after the send in flight,
    not after the whole page (seen: a relay still sending 30 s after it was told to stop); the rest stay due."""
    import asyncio
    import threading

    from helpers.deliveries import alert_write, store_alerts, target
    from tenant_events.destinations.send import Outcome
    from tenant_events.destinations.worker import DeliveryWorker
    from tenant_events.store.outbox import Outbox

    db = tmp_path / "acme.sqlite3"
    store_alerts(db, [alert_write() for _ in range(5)])
    sending, sent = threading.Event(), []

    def slow(url, message):
        sending.set()
        threading.Event().wait(0.5)
        sent.append(message)
        return Outcome("delivered")

    hook = target("hook", "json://127.0.0.1:9/hook")

    async def main():
        worker = DeliveryWorker(db, lambda: {"hook": hook}, sender=slow)
        task = asyncio.create_task(worker.run())
        await asyncio.to_thread(sending.wait, 10)
        await worker.close()
        await asyncio.wait_for(task, 10)

    asyncio.run(main())
    assert len(sent) == 1
    outbox = Outbox(db)
    try:
        assert len(outbox.due(10**10, set())) == 4
    finally:
        outbox.close()


def test_with_no_destination_rows_are_routed_without_reading_their_alerts(tmp_path):
    """The default settings have no destination: a catch-up's hundreds of alerts are routed to none without the
    worker reading each alert back or looking for a silence over it."""
    db = tmp_path / "acme.sqlite3"
    store_alerts(db, [alert_write(), alert_write("other")])
    looked: list[int] = []

    def silenced(alert):
        looked.append(alert.id)
        return False

    run_worker(db, {}, lambda: not _unrouted(db), silenced=silenced)
    assert looked == []
    assert _deliveries(db) == 0


def _unrouted(db):
    conn = connect(db, readonly=True)
    try:
        return conn.execute("SELECT count(*) FROM alert_outbox WHERE routed = 0").fetchone()[0]
    finally:
        conn.close()


def _deliveries(db):
    conn = connect(db, readonly=True)
    try:
        return conn.execute("SELECT count(*) FROM alert_deliveries").fetchone()[0]
    finally:
        conn.close()
