"""The window's background reads when Qt runs a task's step after the asyncio loop stopped (a window closing)."""

from __future__ import annotations

import asyncio

import pytest

from tenant_events.ui.window.background_reads import read_in_background

pytestmark = pytest.mark.gui


def test_a_read_asked_for_after_the_loop_stopped_is_given_up_not_an_error(qapp, qloop):
    """A task whose next step Qt runs once the loop stopped would have failed with "no running event loop" (and
    the loop's handler would have reported "Task exception was never retrieved"); it ends cancelled instead."""
    gate = qloop.create_future()
    ran: list[int] = []

    async def names() -> None:
        await gate  # resolved once the loop stopped: the next step comes from Qt's own event processing
        ran.append(await read_in_background(lambda: 1))

    async def start() -> asyncio.Task[None]:
        task = asyncio.ensure_future(names())
        await asyncio.sleep(0)  # the task waits on the gate
        return task

    task = qloop.run_until_complete(start())
    assert not task.done()
    gate.set_result(None)
    for _ in range(50):  # as pytest-qt and a closing window do: events processed with no loop running
        qapp.processEvents()
        if task.done():
            break
    assert task.done() and task.cancelled() and ran == []
