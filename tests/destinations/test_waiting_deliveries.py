"""Many deliveries waiting on one destination (its receiver down for an hour during an incident, or its URL not
readable from the keyring): the worker's bookkeeping of a pass is one write transaction, not one per waiting
delivery (each would compete with the store's writer), and a receiver that takes 30 s to answer holds back no
other destination's alert."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from helpers.deliveries import alert_write, free_port, run_worker, store_alerts, target
from helpers.slack import bound
from tenant_events.destinations.worker import Backoff, DeliveryWorker, Target
from tenant_events.store.outbox import Outbox

WAITING = 300  # more than a page of due deliveries (200)
ONE_PASS = Backoff(base=600.0, cap=600.0)  # a failure is tried again long after the test


def _count_writes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each write transaction the outbox commits, by the name of what it did (the real transaction runs)."""
    writes: list[str] = []
    real = Outbox._write

    def counted(self: Outbox, fn: object, *args: object) -> object:
        writes.append(getattr(fn, "__qualname__", repr(fn)))
        return real(self, fn, *args)

    monkeypatch.setattr(Outbox, "_write", counted)
    return writes


def _waiting_with_error(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        row = conn.execute(
            "SELECT count(*) FROM alert_deliveries WHERE state = 'pending' AND last_error IS NOT NULL"
        ).fetchone()
    return int(row[0])


def _unreadable(name: str) -> Target:
    down = target(name, "json://127.0.0.1:9/hook")
    return Target(down.profile, "", down.fingerprint, "its URL cannot be read: the system keyring is locked")


@pytest.mark.parametrize("why", ["receiver down", "url unreadable"])
def test_a_pass_over_many_waiting_deliveries_is_one_write_transaction(tmp_path, monkeypatch, why):
    db = tmp_path / "acme.sqlite3"
    store_alerts(db, [alert_write(f"rule-{i}") for i in range(WAITING)])
    if why == "receiver down":
        ops = target("ops", f"json://127.0.0.1:{free_port()}/hook")  # connection refused
    else:
        ops = _unreadable("ops")
    writes = _count_writes(monkeypatch)
    worker = run_worker(db, {"ops": ops}, lambda: _waiting_with_error(db) == WAITING, backoff=ONE_PASS)
    passes = [w for w in writes if "ensure_outbox" not in w and "route" not in w]
    print(f"{why}: {len(passes)} write transaction(s) for a pass over {WAITING} waiting deliveries")
    assert len(passes) <= 2, f"{len(passes)} write transactions for one pass: {sorted(set(passes))}"
    assert worker.delivered == 0
    with sqlite3.connect(db) as conn:
        attempts = conn.execute("SELECT sum(attempts), min(next_at) FROM alert_deliveries").fetchone()
    counted = 1 if why == "receiver down" else 0  # one failed attempt (a held URL counts none)
    assert attempts[0] == counted
    assert attempts[1] > time.time() + 5  # every one of them waits, none is tried again at once


def test_a_receiver_taking_30_s_holds_back_no_other_destinations_alert(tmp_path, httpserver):
    """The slow receiver has many deliveries waiting and answers its first after 30 s (past the attempt's
    deadline); an alert raised meanwhile for another destination reaches it within a few seconds."""
    release = threading.Event()
    slow_requests: list[float] = []

    def slow(request: Request) -> Response:
        slow_requests.append(time.monotonic())
        release.wait(30.0)  # answers after 30 s (or when the test ends)
        return Response("ok")

    arrived: list[float] = []
    httpserver.expect_request("/fast", method="POST").respond_with_handler(
        lambda request: arrived.append(time.monotonic()) or Response("ok")
    )
    slow_server = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    slow_server.expect_request("/slow", method="POST").respond_with_handler(slow)
    slow_server.start()
    db = tmp_path / "acme.sqlite3"
    store_alerts(db, [alert_write(f"rule-{i}", severity="warning") for i in range(WAITING)])
    targets = {
        "slow": target("slow", f"json://127.0.0.1:{slow_server.port}/slow"),
        "fast": target("fast", f"json://127.0.0.1:{httpserver.port}/fast", severities=["critical"]),
    }

    async def main() -> float:
        worker = DeliveryWorker(db, lambda: targets, backoff=ONE_PASS)
        task = asyncio.create_task(worker.run())
        try:
            await _until(lambda: len(slow_requests) == 1, worker)
            raised = time.monotonic()
            store_alerts(db, [alert_write("urgent-rule", severity="critical")])  # while the slow send hangs
            worker.kick()
            await _until(lambda: len(arrived) == 1, worker)
            return arrived[0] - raised
        finally:
            await worker.close()
            await task

    try:
        took = asyncio.run(main())
    finally:
        release.set()
        slow_server.stop()
    print(f"the fast destination's alert arrived {took:.2f} s after it was raised, the slow send in flight")
    assert took < bound(2.0), f"the fast destination's alert took {took:.1f} s"
    assert len(slow_requests) == 1  # one send in flight, the rest wait behind it


async def _until(check, worker: DeliveryWorker, limit: float = 20.0) -> None:
    deadline = time.monotonic() + bound(limit)
    while not check():
        assert time.monotonic() < deadline, "timed out"
        worker.kick()
        await asyncio.sleep(0.02)
