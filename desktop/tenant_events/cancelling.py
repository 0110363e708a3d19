"""Waiting for a task this code cancelled, in clean-up code that must go on whatever happens."""

from __future__ import annotations

import asyncio
from typing import Any


async def finish_cancelled(task: asyncio.Future[Any]) -> None:
    """Wait for `task` to end after `task.cancel()`. Its CancelledError is expected and not raised (nor is one
    the waiting task already received: the clean-up after this line still runs); a cancellation of the waiting
    task that arrives during the wait does interrupt it. An error the task ended with is raised."""
    await asyncio.wait({task})
    if not task.cancelled():
        task.result()
