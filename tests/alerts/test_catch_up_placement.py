"""Where the rules' process runs each step: live on its loop's thread; a catch-up's first seconds on the thread that
takes only idle CPU, after that on the one that takes a share (so a long backlog never leaves the rules behind)."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

from helpers.alert_events import event
from tenant_events.alerts.evaluator_child import IDLE_GRACE_S, LIVE_STEP, CatchUpPools, PlacedSteps
from tenant_events.store import Batch, StoreWriter
from tenant_events.store.alert_connection import AlertConnection


def test_a_catch_up_takes_idle_cpu_for_its_grace_then_a_share_and_live_steps_start_the_count_again(tmp_path):
    db = tmp_path / "t.sqlite3"
    writer = StoreWriter(db)
    writer.submit(Batch(events=[event("user.updated", i) for i in range(LIVE_STEP * 3)], cursor="c")).result()
    writer.close()
    store = AlertConnection(db)
    newest = store.newest_seq()
    pools = CatchUpPools(
        idle=ThreadPoolExecutor(1, thread_name_prefix="idle"),
        catch_up=ThreadPoolExecutor(1, thread_name_prefix="share"),
    )
    now, mark = [100.0], [0]

    async def placed() -> list[str]:
        steps = PlacedSteps(store, lambda: mark[0], pools, clock=lambda: now[0])
        where = []

        async def step(at: float, watermark: int) -> None:
            now[0], mark[0] = at, watermark
            future = steps.run_alert_job(lambda _ledger: threading.current_thread().name)
            where.append((await asyncio.wrap_future(future)).split("_")[0])

        await step(100.0, 0)  # far behind: the catch-up begins
        await step(100.0 + IDLE_GRACE_S / 2, 10)
        await step(100.0 + IDLE_GRACE_S + 0.1, 20)  # still behind past the grace
        await step(100.0 + IDLE_GRACE_S + 0.2, newest)  # caught up: live, on the loop's thread
        await step(200.0, 0)  # behind again: a new catch-up, a new grace
        await step(200.0 + IDLE_GRACE_S - 0.1, 5)
        steps.close()
        return where

    try:
        assert asyncio.run(placed()) == ["idle", "idle", "share", "MainThread", "idle", "idle"]
    finally:
        store.close()
