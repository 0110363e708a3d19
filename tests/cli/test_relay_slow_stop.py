"""A relay still stopping long after SIGTERM says what it waits for: each unfinished task's chain of awaits."""

from __future__ import annotations

import asyncio
import re

from tenant_events.cli.relay_cmd import _say_pending


def test_a_slow_stop_names_each_task_and_where_it_waits(capsys):
    async def hold_lease(gate: asyncio.Event) -> None:
        await gate.wait()

    async def go() -> None:
        gate = asyncio.Event()
        task = asyncio.create_task(hold_lease(gate), name="relay-lease")
        asyncio.get_running_loop().call_later(0.05, _say_pending)  # as the signal handler schedules it
        await asyncio.sleep(0.1)
        gate.set()
        await task

    asyncio.run(go())
    err = capsys.readouterr().err
    assert err.startswith("tenant-events: stopping: still stopping after 10 s; waiting in ")
    assert "relay-lease: hold_lease > wait (locks.py:" in err  # down to the innermost await
    assert re.search(
        r"Task-\d+: go > sleep \(tasks.py:\d+\)", err
    )  # the waiting task itself, named by asyncio
