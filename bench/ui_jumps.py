"""bench/ui.py's scrollbar jumps right after a filter change, made the way the user makes them: the filter
bar's change (the first page, a query's on a worker; the total on a worker), then a random jump as soon as the
rows are there, before the window's background pass has the page keys."""

from __future__ import annotations

import asyncio
import random
import statistics
import time
from typing import Any


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # as bench/ui.py's pct


async def _rows_there(window: Any) -> None:
    reader = getattr(window, "first_page", None)  # absent in versions that read a query's first page inline
    if reader is not None:
        await reader.wait()
    while window.model.counting:  # noqa: ASYNC110 - no signal says "counted" when the total adds no rows
        await asyncio.sleep(0.002)


async def jumps_after_filter(
    window: Any, app: Any, rng: random.Random, flt: Any, n: int
) -> tuple[float, float, float, int]:
    """Median, p95 and max ms of a random jump painted just after `flt` was applied afresh, and how many of the
    `n` jumps came before the page keys (a small result's keys may be there already)."""
    from tenant_events.values.events import EventFilter

    times, cold = [], 0
    bar = window.table.verticalScrollBar()
    for _ in range(n):
        window.apply_filter_now(EventFilter(types=frozenset({"user.created"})))
        await _rows_there(window)
        window.apply_filter_now(flt)
        await _rows_there(window)
        cold += not window.model.has_anchors
        t0 = time.perf_counter()
        bar.setValue(rng.randrange(bar.maximum() + 1))
        window.table.updateGeometries()
        window.table.viewport().repaint()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), _pct(times, 0.95), max(times), cold
