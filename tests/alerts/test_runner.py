"""The evaluator attached to a real TenantMonitor over the real simulator: alerts arrive through on_alerts as the
store commits, re-sent events change nothing, the last commits are evaluated before the database closes."""

from __future__ import annotations

import asyncio

from tenant_events.alert_settings import AlertSettings
from tenant_events.alerts.evaluator_process import attach
from tenant_events.alerts.from_settings import build_evaluator
from tenant_events.monitor import TenantMonitor
from tenant_events.paths import AppPaths
from tenant_events.store import AlertInbox
from tenant_events.stream.engine import EngineConfig
from tenant_events.stream.tokens import StaticTokenProvider

QUIET_CLOCK = AlertSettings(
    rules=[{"id": "off-hours", "enabled": False}]
)  # whatever the hour of the test run


async def _until(check, what, limit=20.0):
    for _ in range(int(limit / 0.02)):
        if check():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def test_alerts_follow_commits_once_and_the_last_are_evaluated_at_stop(make_simulator, tmp_path):
    sim = make_simulator(heartbeat=0.2, test_purpose_every=0)  # every event sent counts: none is a test event
    paths = AppPaths.resolve(tmp_path).ensure()
    seen = []

    async def scenario():
        monitor = TenantMonitor(
            "acme", paths, EngineConfig(sim.base_url, name="acme"), StaticTokenProvider(sim.mint_token())
        )
        await monitor.start()
        runner = attach(monitor, "acme", QUIET_CLOCK.model_dump_json(), by_received=False, resume=None)
        runner.on_alerts.append(seen.append)
        await _until(lambda: monitor.state.state.value == "live", "live")
        sim.emit(1, ["organization.deleted"])
        await _until(lambda: any(a.rule_id == "org-deleted" for r in seen for a in r.raised), "org-deleted")
        sim.faults(duplicate_every=2)  # every 2nd event is sent twice from now on
        sim.emit(25, ["user.deleted"])
        await _until(
            lambda: any(a.rule_id == "mass-deletion" for r in seen for a in r.raised), "mass-deletion"
        )
        sim.emit(3, ["organization.deleted"])  # within the coalescing time: folds into the first alert
        await _until(lambda: monitor.stats.events_stored >= 29, "29 stored")
        await monitor.stop()  # the before_close hook evaluated the last commit
        return monitor

    monitor = asyncio.run(scenario())
    with AlertInbox(monitor.database_file) as inbox:
        alerts = {a.rule_id: a for a in inbox.alerts()}
        assert set(alerts) == {"org-deleted", "mass-deletion"}
        assert (alerts["org-deleted"].occurrences, alerts["org-deleted"].event_count) == (4, 4)
        # organization deletions count in a window of their own (four is no mass deletion)
        assert alerts["mass-deletion"].event_count == 25 and alerts["mass-deletion"].occurrences == 1
        assert alerts["mass-deletion"].severity == "critical" and not alerts["mass-deletion"].catch_up
    assert monitor.stats.duplicates_dropped > 0
    raised = [a.rule_id for r in seen for a in r.raised]
    assert sorted(raised) == ["mass-deletion", "org-deleted"]


def test_a_drain_waits_for_what_was_committed_before_it_not_for_the_stream_tail(tmp_path):
    """A drain during a catch-up used to chase every commit made while it waited: with a stream that goes on
    committing it never returned until the stream ended (bench/ingest.py's rules consumer ingested and evaluated
    the simulator's whole backlog instead of its --events)."""
    from helpers.alert_events import event
    from tenant_events.alerts.runner import AlertRunner
    from tenant_events.store import Batch, StoreWriter

    writer = StoreWriter(tmp_path / "t.sqlite3")
    runner = AlertRunner(build_evaluator(QUIET_CLOCK, "demo"), lambda: writer)

    async def scenario():
        n = 0

        async def commit(count):
            nonlocal n
            n += 1
            rows = [event("user.updated", n * 10 + i * 0.01) for i in range(count)]
            result = await asyncio.wrap_future(writer.submit(Batch(events=rows, cursor=f"c{n}")))
            runner.kick(result)
            return result.last_seq

        target = await commit(500)
        stop = asyncio.Event()

        async def stream_goes_on():
            while not stop.is_set():
                await commit(200)

        tail = asyncio.create_task(stream_goes_on())
        try:
            await asyncio.wait_for(runner.drain(), timeout=15)
            assert runner.evaluator.watermark >= target
        finally:
            stop.set()
            await tail
        await runner.drain()  # and a last drain once the stream stopped covers the rest

    try:
        asyncio.run(scenario())
    finally:
        writer.close()


def test_a_step_cut_at_its_time_bound_goes_on_without_another_commit(tmp_path):
    """The rules' process evaluates a catch-up in steps of a bounded time: after each the runner goes on by
    itself, not at the next commit (a quiet tenant's backlog would wait for one)."""
    from helpers.alert_events import event
    from helpers.slack import bound
    from tenant_events.alerts.runner import AlertRunner
    from tenant_events.store import Batch, StoreWriter

    writer = StoreWriter(tmp_path / "t.sqlite3")
    evaluator = build_evaluator(QUIET_CLOCK, "demo")
    evaluator.chunk, evaluator.step_s, evaluator.tick_s = (
        50,
        0.0,
        3600.0,
    )  # a chunk a step; no quiet-time ticks
    runner = AlertRunner(evaluator, lambda: writer)
    steps = []
    runner.on_step.append(steps.append)

    async def scenario():
        rows = [event("user.updated", i * 0.01) for i in range(500)]
        runner.kick(await asyncio.wrap_future(writer.submit(Batch(events=rows, cursor="c1"))))
        await _until(lambda: evaluator.watermark == 500, "the backlog evaluated", bound(30))
        runner.close()
        await runner.idle()

    try:
        asyncio.run(scenario())
    finally:
        writer.close()
    assert len(steps) >= 10 and [s.more for s in steps][-1] is False
