"""Background tasks held until they are done, and cancelled or awaited at shutdown.

The event loop keeps only weak references to tasks (qasync#159), so a task nobody holds may be collected while
it runs. Each owner of background work (the app, the window's feed, the first-page reader, alert
notifications) holds its tasks in one `TaskSet` instead of a set and two callbacks of its own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")


class TaskSet:
    """The running tasks of one owner; `on_done` (optional) sees each task once it has finished."""

    def __init__(self, on_done: Callable[[asyncio.Task[Any]], None] | None = None) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()
        self._on_done = on_done

    def spawn(self, work: Awaitable[T]) -> asyncio.Task[T]:
        """Run `work` as a task held until done (RuntimeError when no loop runs, as asyncio.ensure_future)."""
        return self.keep(asyncio.ensure_future(work))

    def keep(self, task: asyncio.Task[T]) -> asyncio.Task[T]:
        """Hold a task started elsewhere until it is done."""
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if self._on_done is not None:
            self._on_done(task)

    def __len__(self) -> int:
        return len(self._tasks)

    def __iter__(self) -> Iterator[asyncio.Task[Any]]:
        return iter(list(self._tasks))

    async def wait(self) -> None:
        """Until every task, including any started meanwhile, has finished (their errors are theirs)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def cancel(self) -> None:
        """Cancel every task and wait until they have ended."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
