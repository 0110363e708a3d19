"""A cancelled task is waited for; one that lost its cancellation (as a request inside `asyncio.wait_for` can on
Python 3.11) is cancelled again when the caller says it has nothing of its own to clean up."""

from __future__ import annotations

import asyncio
import time

from tenant_events.cancelling import CANCEL_AGAIN_S, finish_cancelled


async def renew_forever(renewals: list[float]) -> None:
    """Like a lease renewal whose first cancellation was lost: it goes on until cancelled once more."""
    lost = False
    while True:
        try:
            await asyncio.sleep(0.05)
        except asyncio.CancelledError:
            if lost:
                raise
            lost = True  # the first cancellation disappears, as wait_for's race makes it
        renewals.append(time.monotonic())


def test_a_task_that_lost_its_cancellation_is_cancelled_again():
    async def go() -> float:
        renewals: list[float] = []
        task = asyncio.create_task(renew_forever(renewals))
        await asyncio.sleep(0.1)
        started = time.monotonic()
        task.cancel()
        await finish_cancelled(task, again=True)
        assert task.cancelled() and renewals  # it did go on after the first cancellation
        return time.monotonic() - started

    assert asyncio.run(go()) < CANCEL_AGAIN_S + 0.5


def test_without_again_a_task_finishing_its_clean_up_is_left_to_finish_it():
    async def closes_slowly(closed: list[bool]) -> None:
        try:
            await asyncio.sleep(60)
        finally:
            await asyncio.sleep(CANCEL_AGAIN_S + 0.3)  # a clean-up longer than the re-cancel delay
            closed.append(True)

    async def go() -> list[bool]:
        closed: list[bool] = []
        task = asyncio.create_task(closes_slowly(closed))
        await asyncio.sleep(0)
        task.cancel()
        await finish_cancelled(task)
        return closed

    assert asyncio.run(go()) == [True]
