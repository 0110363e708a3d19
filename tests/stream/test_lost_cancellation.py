"""A cancellation that a finishing `asyncio.wait_for` swallowed (Python 3.11) is not lost for good: the task still
counts it, and `cancelled_meanwhile()` raises it where the task's body checks. A relay that lost its lease while its
team alerts started (hub requests, each such a wait) went on to evaluate and deliver, and never stopped."""

from __future__ import annotations

import asyncio
import sys

import pytest

from tenant_events.cancelling import cancelled_meanwhile


def test_a_cancellation_that_met_a_finishing_wait_is_raised_at_the_next_check() -> None:
    reached: list[str] = []

    async def body(started: asyncio.Future[int]) -> None:
        await asyncio.wait_for(started, 5)  # a hub request whose answer came in the turn of the stop
        reached.append("after the wait")
        cancelled_meanwhile()
        reached.append("went on")

    async def main() -> None:
        answer: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        task = asyncio.create_task(body(answer))
        await asyncio.sleep(0)  # the body waits for its answer
        answer.set_result(1)
        task.cancel()  # the stop, in the same turn as the answer
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    if sys.version_info < (3, 12):  # there the wait returns its answer: the check is what ends the task
        assert reached == ["after the wait"]
    assert "went on" not in reached


def test_a_task_never_cancelled_goes_on() -> None:
    async def body() -> str:
        await asyncio.wait_for(asyncio.sleep(0, "answer"), 5)
        cancelled_meanwhile()
        return "went on"

    assert asyncio.run(body()) == "went on"
