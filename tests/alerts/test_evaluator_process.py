"""The rules' own process: started by the hidden argument the command line knows, it evaluates what the parent
committed without the parent's writer taking part, is started again when it dies, and ends with its handle."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from helpers.alert_events import event
from helpers.slack import bound
from tenant_events.alert_settings import AlertSettings
from tenant_events.alerts.evaluator_child import CHILD_ARG, LIVE_STEP
from tenant_events.alerts.evaluator_process import EvaluatorProcess
from tenant_events.cli.main import ALERT_CATCH_UP_NICENESS, ALERT_EVALUATOR
from tenant_events.store import AlertInbox, Batch, StoreWriter

RULES = AlertSettings(
    rules=[
        {"id": "off-hours", "enabled": False},
        {"id": "gone", "name": "Org gone", "severity": "info", "types": ["organization.deleted"]},
    ]
)


async def _stopped(runner):
    runner.close()
    await asyncio.wait_for(runner.idle(), bound(30))


def _run_then_close(scenario, writer):
    try:
        asyncio.run(scenario())
    finally:
        writer.close()


def test_the_command_line_knows_the_evaluators_argument():
    assert CHILD_ARG == ALERT_EVALUATOR


@pytest.mark.expect_warning_logs  # the restart after the kill is said
def test_the_child_evaluates_commits_comes_back_after_a_kill_and_raises_nothing_twice(tmp_path):
    db = tmp_path / "t.sqlite3"
    writer = StoreWriter(db)
    seen = []

    async def scenario():
        runner = EvaluatorProcess(db, "demo", RULES.model_dump_json(), by_received=False, resume=None)
        runner.on_alerts.append(seen.append)

        async def commit(n, at):
            rows = [event("organization.deleted", at + i) for i in range(n)]
            result = await asyncio.wrap_future(writer.submit(Batch(events=rows, cursor=f"c{at}")))
            runner.kick(result)

        async def until(check, what):
            for _ in range(int(bound(30) / 0.02)):
                if check():
                    return
                await asyncio.sleep(0.02)
            raise AssertionError(f"timed out waiting for {what}")

        try:
            await commit(1, 10)
            await until(lambda: seen, "the first alert")
            first = runner.pid
            assert first is not None and first != os.getpid()
            os.kill(first, signal.SIGKILL)
            await until(lambda: runner.restarts == 1 and runner.pid != first, "a new child")
            await commit(2, 100_000)
            await runner.drain()
            assert runner.watermark == 3
        finally:
            await _stopped(runner)

    _run_then_close(scenario, writer)
    with AlertInbox(db) as inbox:
        alerts = inbox.alerts()
    assert sum(a.event_count for a in alerts if a.rule_id == "gone") == 3  # each event behind one alert, once
    assert "gone" in {a.rule_id for r in seen for a in r.alerts}


def test_the_parent_never_blocks_on_a_child_that_does_not_read(tmp_path):
    """A stopped child (or one deep in a long step) reads nothing: a rules change larger than the pipe holds and
    the kicks after every commit must not hold the parent's event loop. Once it reads again it gets the new rules
    whole and evaluates with them what was committed meanwhile."""
    db = tmp_path / "t.sqlite3"
    writer = StoreWriter(db)
    seen = []
    # the new rules: one that fires on group deletions, and enough padding to be far larger than a pipe's buffer
    padding = [
        {"id": f"pad-{i}", "name": "x" * 80, "severity": "info", "types": ["user.deleted"], "enabled": False}
        for i in range(2000)
    ]
    new_rules = AlertSettings(
        rules=[
            {"id": "off-hours", "enabled": False},
            {"id": "grp", "name": "Group gone", "severity": "info", "types": ["group.deleted"]},
            *padding,
        ]
    ).model_dump_json()
    assert len(new_rules) > 4 * 65536

    async def scenario():
        runner = EvaluatorProcess(db, "demo", RULES.model_dump_json(), by_received=False, resume=None)
        runner.on_alerts.append(seen.append)
        ticks = 0

        async def ticking():  # the loop goes on while the child reads nothing
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.01)

        ticker = asyncio.create_task(ticking())
        try:
            for _ in range(int(bound(30) / 0.02)):  # started, and the (empty) store evaluated
                if runner.watermark is not None:
                    break
                await asyncio.sleep(0.02)
            child = runner.pid
            os.kill(child, signal.SIGSTOP)
            try:
                runner.replace_rules(new_rules)
                rows = [event("group.deleted", 10)]
                for _ in range(20_000):
                    runner.kick()
                runner.kick(await asyncio.wrap_future(writer.submit(Batch(events=rows, cursor="c1"))))
                before = ticks
                await asyncio.sleep(0.2)
                assert ticks > before, "the event loop stood still"
            finally:
                os.kill(child, signal.SIGCONT)
            await asyncio.wait_for(runner.drain(), bound(30))
            assert runner.watermark == 1 and runner.restarts == 0 and runner.pid == child
        finally:
            ticker.cancel()
            await _stopped(runner)

    _run_then_close(scenario, writer)
    assert [a.rule_id for r in seen for a in r.raised] == ["grp"]


def _niceness(pid):
    """Each thread's niceness in a process (Linux /proc: field 19 of each task's stat)."""
    found = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        found[int(task.name)] = int(fields[16])
    return found


def test_a_live_step_runs_at_the_parents_priority_and_a_catch_up_below_it(tmp_path):
    """At a lower priority, each live step's wake-up waited for the machine's other work (on a loaded machine an
    alert came late); a catch-up's steps leave the larger share of a core to the process that stores."""
    db = tmp_path / "t.sqlite3"
    writer = StoreWriter(db)
    seen = []
    ours = os.getpriority(os.PRIO_PROCESS, 0)

    async def scenario():
        runner = EvaluatorProcess(db, "demo", RULES.model_dump_json(), by_received=False, resume=None)
        runner.on_alerts.append(seen.append)
        try:
            rows = [event("user.updated", i * 0.01) for i in range(LIVE_STEP * 3)]  # a backlog
            runner.kick(await asyncio.wrap_future(writer.submit(Batch(events=rows, cursor="c1"))))
            await asyncio.wait_for(runner.drain(), bound(60))
            niceness = _niceness(runner.pid)
            assert niceness[runner.pid] == ours  # the thread of its event loop, which runs live steps
            # (as a set: a test run at niceness 19 already has no lower one to give)
            assert set(niceness.values()) == {ours, min(ours + ALERT_CATCH_UP_NICENESS, 19)}
            rows = [event("organization.deleted", 1000)]  # live
            runner.kick(await asyncio.wrap_future(writer.submit(Batch(events=rows, cursor="c2"))))
            await asyncio.wait_for(runner.drain(), bound(30))
            assert "gone" in [a.rule_id for r in seen for a in r.raised]
            assert _niceness(runner.pid)[runner.pid] == ours
        finally:
            await _stopped(runner)

    _run_then_close(scenario, writer)


def test_a_stop_in_a_catch_up_ends_the_child_after_its_step_and_the_next_goes_on_from_there(tmp_path):
    """A stop (the app quits, `stream` gets SIGTERM) during a long catch-up is not held until the whole backlog is
    evaluated: the child ends after its step in flight, and the next one goes on from the stored watermark."""
    db = tmp_path / "t.sqlite3"
    writer = StoreWriter(db)
    backlog = 200_000  # (many steps' worth)
    seen = []

    async def scenario():
        for at in range(0, backlog, 20_000):
            rows = [event("user.updated", at + i * 0.01) for i in range(20_000)]
            await asyncio.wrap_future(writer.submit(Batch(events=rows, cursor=f"c{at}")))
        rows = [event("organization.deleted", backlog + 1)]
        last = await asyncio.wrap_future(writer.submit(Batch(events=rows, cursor="last")))
        runner = EvaluatorProcess(db, "demo", RULES.model_dump_json(), by_received=False, resume=None)
        runner.on_alerts.append(seen.append)
        runner.kick(last)
        for _ in range(int(bound(60) / 0.01)):  # its first step
            if runner.watermark:
                break
            await asyncio.sleep(0.01)
        assert not runner.live
        await asyncio.wait_for(runner.pause(), bound(10))
        stopped_at = runner.watermark
        assert stopped_at is not None and stopped_at < backlog
        again = EvaluatorProcess(db, "demo", RULES.model_dump_json(), by_received=False, resume=None)
        again.on_alerts.append(seen.append)
        again.kick(last)
        try:
            await asyncio.wait_for(again.drain(), bound(120))
        finally:
            await _stopped(again)
        return stopped_at

    _run_then_close(scenario, writer)
    with AlertInbox(db) as inbox:
        assert [(a.rule_id, a.event_count) for a in inbox.alerts() if a.rule_id == "gone"] == [("gone", 1)]


def test_the_store_hears_the_rules_are_catching_up_until_they_are_through(tmp_path):
    """While the child is more than a live step behind the commits, `catching_up` says so (the store's indexing
    waits on it, store/writer.py idle_waits_for); once it is through, or ended, it no longer does."""
    db = tmp_path / "t.sqlite3"
    writer = StoreWriter(db)

    async def scenario():
        rows = [event("user.updated", i * 0.01) for i in range(20 * LIVE_STEP)]
        last = await asyncio.wrap_future(writer.submit(Batch(events=rows, cursor="backlog")))
        runner = EvaluatorProcess(db, "demo", RULES.model_dump_json(), by_received=False, resume=None)
        try:
            runner.kick(last)
            assert runner.catching_up
            await asyncio.wait_for(runner.drain(), bound(60))
            assert not runner.catching_up
            more = [event("user.updated", 10_000 + i * 0.01) for i in range(20 * LIVE_STEP)]
            runner.kick(await asyncio.wrap_future(writer.submit(Batch(events=more, cursor="more"))))
            assert runner.catching_up
            await asyncio.wait_for(runner.pause(), bound(10))
            assert not runner.catching_up  # (ended with its writer: nothing to wait for)
        finally:
            await _stopped(runner)

    _run_then_close(scenario, writer)
