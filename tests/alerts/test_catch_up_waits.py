"""A catch-up's steps wait while the store takes in a burst, for a grace at most; live steps never wait."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from helpers.alert_events import event
from helpers.slack import bound
from tenant_events.alerts.evaluator_child import LIVE_STEP, STORE_PAUSE_S, PlacedSteps, StoreBusy
from tenant_events.store import Batch, StoreWriter
from tenant_events.store.alert_connection import AlertConnection


def _committing(busy: StoreBusy, stop: threading.Event, every: float = 0.02) -> list[float]:
    """Say a commit every `every` seconds until `stop`; returns the list the times go into."""
    said: list[float] = []

    def run() -> None:
        while not stop.is_set():
            busy.committed()
            said.append(time.monotonic())
            stop.wait(every)

    threading.Thread(target=run, daemon=True).start()
    return said


def test_a_catch_up_step_waits_for_the_store_to_pause():
    busy, stop = StoreBusy(), threading.Event()
    said = _committing(busy, stop)
    threading.Timer(0.5, stop.set).start()  # the burst ends
    busy.wait_for_a_pause(time.monotonic() + bound(60))
    returned = time.monotonic()
    assert stop.is_set() and returned >= said[-1] + STORE_PAUSE_S * 0.9


def test_a_burst_longer_than_the_grace_is_not_waited_for_past_it():
    busy, stop = StoreBusy(), threading.Event()
    _committing(busy, stop)
    try:
        busy.wait_for_a_pause(time.monotonic() + 0.5)  # returns by the grace's end, the burst going on
        assert not stop.is_set()
    finally:
        stop.set()


def test_a_stop_ends_the_wait():
    busy, stop = StoreBusy(), threading.Event()
    _committing(busy, stop)
    try:
        threading.Timer(0.3, busy.stop).start()
        busy.wait_for_a_pause(time.monotonic() + bound(600))
    finally:
        stop.set()


def test_a_live_step_runs_at_once_during_a_burst_and_a_catch_up_step_after_it(tmp_path):
    db = tmp_path / "t.sqlite3"
    writer = StoreWriter(db)
    writer.submit(Batch(events=[event("user.updated", i) for i in range(LIVE_STEP * 3)], cursor="c")).result()
    writer.close()
    store = AlertConnection(db)
    newest = store.newest_seq()
    busy, stop, mark = StoreBusy(), threading.Event(), [newest]
    pool = ThreadPoolExecutor(1)

    async def placed() -> tuple[float, float, list[float]]:
        steps = PlacedSteps(store, lambda: mark[0], pool, busy)
        said = _committing(busy, stop)
        live = await asyncio.wrap_future(steps.run_alert_job(lambda _l: time.monotonic()))
        assert not stop.is_set()  # (the burst still going on)
        mark[0] = 0  # far behind: a catch-up
        threading.Timer(0.5, stop.set).start()
        caught_up = await asyncio.wrap_future(steps.run_alert_job(lambda _l: time.monotonic()))
        steps.close()
        return live, caught_up, said

    try:
        live, caught_up, said = asyncio.run(placed())
    finally:
        stop.set()
        store.close()
    assert live < said[-1] and caught_up >= said[-1] + STORE_PAUSE_S * 0.9
