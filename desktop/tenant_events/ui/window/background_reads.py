"""The window's reads of a tenant's store (its first pages, counts, aggregates and the rows' names) on threads of
their own, below the UI thread's CPU priority (thread_priority.py).

A year's reads keep a core busy for seconds; on the default executor's threads they had the UI thread's priority,
and on two cores its paints (15 ms of CPU) waited 100-300 ms for one. Here the UI thread comes first whenever both
want a core, and the reads still get every core it leaves idle. DuckDB's own threads are started low as well
(store/duck.py).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final, TypeVar

from tenant_events.thread_priority import lower_this_thread

T = TypeVar("T")
READ_THREADS: Final = 6  # a first page, a count, an aggregates pass, names and a head advance at once
_pool: ThreadPoolExecutor | None = None


def read_in_background(fn: Callable[..., T], /, *args: Any) -> asyncio.Future[T]:
    """`fn(*args)` on a read thread, awaited as `asyncio.to_thread` would be (the running loop's future).

    Qt may run a task's next step after its loop ended (a window closing while a page's names were read): no loop
    runs then to await the read in, and the read is given up as a cancelled task is, not raised as an error."""
    global _pool
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        raise asyncio.CancelledError from None
    if _pool is None:
        _pool = ThreadPoolExecutor(READ_THREADS, "window-read", initializer=lower_this_thread)
    return loop.run_in_executor(_pool, functools.partial(fn, *args))


async def stop_background_reads() -> None:
    """Wait for the reads under way, then end the read threads: the window's shutdown comes before the app closes
    the readers, and a quit leaves no thread of the app's behind. A later read starts the threads again."""
    global _pool
    pool, _pool = _pool, None
    if pool is not None:
        await asyncio.to_thread(pool.shutdown, True)
