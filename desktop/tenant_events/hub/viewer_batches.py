"""A viewer's pending batch and the commits in flight: what the stream engine does between frames and store.

Messages are added to the pending `Batch` (its cursor is the hub position of the last one); `flush()` hands the
batch to the writer in order, keeping at most `IN_FLIGHT` uncommitted; a timer flushes a batch older than
`max_delay`. Each commit updates the `EngineStats` and calls the `on_commit` observers, as the engine does.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable
from typing import Final

from tenant_events.errors import StorageError
from tenant_events.store.records import Batch, CommitResult, EventRow, GapMarker, RejectedRow
from tenant_events.stream.sink import BatchSink
from tenant_events.stream.states import EngineStats

log = logging.getLogger(__name__)

IN_FLIGHT: Final = 4


class BatchKeeper:
    """Pending batch + commits in flight for one viewer; all methods run on the viewer's loop."""

    def __init__(
        self,
        writer: BatchSink,
        stats: EngineStats,
        on_commit: list[Callable[[CommitResult], None]],
        *,
        name: str,
        max_events: int,
        max_delay: float,
    ) -> None:
        self._writer, self._stats, self._on_commit, self._name = writer, stats, on_commit, name
        self.max_events, self._max_delay = max_events, max_delay
        self.pending = Batch()
        self._since: float | None = None
        self._opened = asyncio.Event()
        self._inflight: deque[asyncio.Future[CommitResult]] = deque()
        self._rate: deque[tuple[float, int]] = deque(maxlen=50)
        self.failure: StorageError | None = None
        self.on_failure: Callable[[], None] = lambda: None

    @property
    def full(self) -> bool:
        return len(self.pending.events) >= self.max_events

    def _open(self) -> None:
        if self._since is None:
            self._since = time.time()
            self._opened.set()

    def add_event(self, row: EventRow, position: str) -> None:
        pending = self.pending
        pending.events.append(row)
        pending.cursor = position
        if pending.last_event_time is None or row.time > pending.last_event_time:
            pending.last_event_time = row.time
        self._open()

    def add_rejected(self, row: RejectedRow, position: str) -> None:
        self.pending.rejected.append(row)
        self.pending.cursor = position
        self._open()

    def add_gap(self, gap: GapMarker, position: str) -> None:
        """Call on an empty batch (flush first), so the gap sits after every event stored before it."""
        self.pending.gap = gap
        self.pending.cursor = position
        self._open()

    async def run_timer(self) -> None:
        """Commit a batch older than max_delay even when no further message comes."""
        while True:
            if self._since is None:
                await self._opened.wait()
                self._opened.clear()
            await asyncio.sleep(self._max_delay / 2)
            if self._since is not None and time.time() - self._since >= self._max_delay:
                try:
                    await self.flush()
                except StorageError as exc:
                    self.failure = exc
                    self.on_failure()

    async def flush(self) -> None:
        batch, self.pending, self._since = self.pending, Batch(), None
        if batch.empty:
            return
        future = asyncio.wrap_future(self._writer.submit(batch))
        future.add_done_callback(self._committed)
        self._inflight.append(future)
        while len(self._inflight) >= IN_FLIGHT:
            await self._inflight.popleft()
        if self.failure is not None:
            raise self.failure

    async def drain(self) -> None:
        await self.flush()
        while self._inflight:
            await self._inflight.popleft()
        if self.failure is not None:
            raise self.failure

    async def discard(self) -> None:
        """After a failed commit: wait out what is in flight and drop the pending batch."""
        while self._inflight:
            try:
                await self._inflight.popleft()
            except Exception as exc:  # each fails like the first one; already reported
                log.debug("%s: a queued batch failed too: %s", self._name, exc)
        self.pending, self._since, self.failure = Batch(), None, None

    def _committed(self, future: asyncio.Future[CommitResult]) -> None:
        if future.cancelled():
            return
        exc = future.exception()
        if exc is not None:
            self.failure = exc if isinstance(exc, StorageError) else StorageError(str(exc))
            log.error("%s: could not store a batch: %s", self._name, exc)
            return
        result, now, stats = future.result(), time.time(), self._stats
        stats.events_stored += result.inserted
        stats.duplicates_dropped += result.duplicates
        stats.rejected += result.rejected
        if result.cursor is not None:
            stats.cursor_updated_at = now
        if result.last_event_time and (
            not stats.last_event_time or result.last_event_time > stats.last_event_time
        ):
            stats.last_event_time = result.last_event_time
        self._rate.append((now, result.inserted))
        if len(self._rate) > 1:
            span = now - self._rate[0][0]
            stats.events_per_second = sum(n for _, n in list(self._rate)[1:]) / span if span > 0 else 0.0
        for callback in list(self._on_commit):
            callback(result)
