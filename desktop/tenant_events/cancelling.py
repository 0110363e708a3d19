"""Waiting for a task this code cancelled, without swallowing a cancellation meant for the one that waits."""

from __future__ import annotations

import asyncio
from typing import Any


async def finish_cancelled(task: asyncio.Future[Any]) -> None:
    """Await `task` after `task.cancel()`: its CancelledError is expected and dropped, unless the waiting task is
    itself being cancelled (then it goes on up, as a cancellation must)."""
    try:
        await task
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise
