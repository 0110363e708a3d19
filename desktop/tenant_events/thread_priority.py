"""Background threads below the UI thread's CPU priority (Linux; no Qt).

On a two-core machine a year's reads (DuckDB's threads, the window's readers) took both cores while the window
painted: a table's paint of 15 ms of CPU took 100-300 ms, its thread waiting for a core. At a niceness of 5 the
thread that asks gets three times a background thread's share when both want a core (CFS weights 1024 and 335),
and the background still gets every core the window leaves idle. On Linux niceness belongs to one thread, and the
threads it starts inherit it; elsewhere `os.nice` would lower the whole process, so nothing changes there.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Final, ParamSpec, TypeVar

BACKGROUND_NICENESS: Final = 5
BACKGROUND_THREADS: Final = 2  # the tiers' upkeep of two tenants at once; a third waits its turn

P = ParamSpec("P")
T = TypeVar("T")
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def lower_this_thread(niceness: int = BACKGROUND_NICENESS) -> bool:
    """Lower the calling thread (and the threads it starts from now on); False where that is not done."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        os.nice(niceness)
    except OSError:  # not allowed here: the thread keeps its priority
        logging.getLogger(__name__).debug("niceness not changed")
        return False
    return True


async def in_background(fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """`fn` run on a lowered thread, awaited: the archive's writing (Python, FTS5 and DuckDB on one thread) is
    minutes of CPU a month that must not take a core from the window while it draws."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(BACKGROUND_THREADS, "background", initializer=lower_this_thread)
        pool = _pool
    return await asyncio.get_running_loop().run_in_executor(pool, functools.partial(fn, *args, **kwargs))
