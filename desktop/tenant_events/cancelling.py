"""Cancelling a task so that it ends: waiting for one this code cancelled, in clean-up code that must go on
whatever happens, and cancelling again one that lost its cancellation.

On Python 3.11 a cancellation that arrives just as an inner `asyncio.wait_for` finishes is lost: the
`wait_for` returns the inner result, and the task goes on as if it had never been cancelled. The hub client
(nats-py) waits for every message and request that way, so a reader that is handed a message (a heartbeat, each
second while idle) in the same turn of the loop as its stop goes on reading for good."""

from __future__ import annotations

import asyncio
from typing import Any, Final

CANCEL_AGAIN_S: Final = 1.0  # with `again`: a cancelled task still running after this long is cancelled again


async def finish_cancelled(task: asyncio.Future[Any], *, again: bool = False) -> None:
    """Wait for `task` to end after `task.cancel()`. Its CancelledError is expected and not raised (nor is one
    the waiting task already received: the clean-up after this line still runs); a cancellation of the waiting
    task that arrives during the wait does interrupt it. An error the task ended with is raised.

    With `again`, a task still running a second later is cancelled again: on Python 3.11 a cancellation that
    arrives just as an inner `asyncio.wait_for` finishes is lost (the hub client's requests use it), and the
    task goes on as if it had never been cancelled (a relay renewed its lease for good after a stop). Only for
    tasks without a clean-up of their own to finish: a second cancellation would cut that short."""
    while not (await asyncio.wait({task}, timeout=CANCEL_AGAIN_S if again else None))[0]:
        task.cancel()
    if not task.cancelled():
        task.result()


def cancel_until_done(task: asyncio.Future[Any], every: float) -> None:
    """Cancel `task` now, and again every `every` seconds for as long as it runs (a lost cancellation, above).
    Does not wait: safe from a signal handler or any callback on the task's loop. `every` should outlast the
    task's own clean-up after a cancellation, which a second one would cut short."""
    if task.done():
        return
    task.cancel()
    task.get_loop().call_later(every, cancel_until_done, task, every)


def cancelled_meanwhile() -> None:
    """Raise the cancellation a finished `wait_for` swallowed (above): the task still counts the request. For the
    body of a task between its start-up waits and its long wait, never in its clean-up (which runs after a
    cancellation on purpose)."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError
