"""The pending batch and the commits in flight: what a follower does between decoded messages and its sink.

Messages go into the pending `Batch` (its cursor is the position after the last one); `flush()` hands the batch
to the sink in order, keeping at most `IN_FLIGHT` uncommitted; a timer flushes a batch older than `max_delay`
even when nothing else arrives. Each commit updates the `EngineStats` and calls the `on_commit` observers. The
cursor only moves inside batches, so a crash at any moment resumes from a cursor whose events are all kept.
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
from tenant_events.values.stream_states import EngineStats

log = logging.getLogger(__name__)

# Batches handed to the sink but not yet committed (pipelining, bounded; each batch at most max_bytes).
# Measured: 12 was no faster than 4 (and since then WAL checkpoints left the writer thread: store/checkpoint.py).
IN_FLIGHT: Final = 4
TIMER_SLACK: Final = 0.002  # seconds: a batch this close to its deadline is flushed now
MAX_REJECTED_RAW: Final = 64 * 1024  # of a rejected frame's data, kept for the person who looks at it


class BatchKeeper:
    """Pending batch + commits in flight for one follower; every method runs on the follower's loop."""

    def __init__(
        self,
        sink: BatchSink,
        stats: EngineStats,
        on_commit: list[Callable[[CommitResult], None]],
        *,
        name: str,
        max_events: int,
        max_delay: float,
        max_bytes: int | None = None,
    ) -> None:
        self._sink, self._stats, self._name = sink, stats, name
        self.on_commit = on_commit  # the follower's observers (FollowLoop.on_commit)
        self.max_events, self._max_delay, self._max_bytes = max_events, max_delay, max_bytes
        self.pending = Batch()
        self.pending_bytes = 0  # of `data:` text: large events make smaller batches (memory stays bounded)
        self._since: float | None = None
        self._opened = asyncio.Event()  # a batch started: the timer sleeps on this while idle (idle CPU)
        self._inflight: deque[asyncio.Future[CommitResult]] = deque()
        self._rate: deque[tuple[float, int]] = deque(maxlen=50)
        self.failure: StorageError | None = None
        self.on_failure: Callable[[], None] = lambda: None  # the timer's flush failed: interrupt the follower
        self.on_kept: Callable[[CommitResult], None] = lambda result: None  # before the observers hear of it

    @property
    def full(self) -> bool:
        if self._max_bytes is not None and self.pending_bytes >= self._max_bytes:
            return True
        return len(self.pending.events) >= self.max_events

    def open(self, at: float | None = None) -> None:
        """Start the batch's age (its flush deadline) unless it has started already."""
        if self._since is None:
            self._since = time.time() if at is None else at
            self._opened.set()

    def add_event(self, row: EventRow, position: str, at: float | None = None) -> None:
        pending = self.pending
        if self._since is None:
            self.open(at)
        pending.events.append(row)
        pending.cursor = position
        if pending.last_event_time is None or row.time > pending.last_event_time:
            pending.last_event_time = row.time

    def add_rejected(self, row: RejectedRow, position: str | None, at: float | None = None) -> None:
        """Keep a refused message; the cursor moves past it only when it has a position."""
        self.pending.rejected.append(row)
        if position:
            self.pending.cursor = position
        self.open(at)

    def add_gap(self, gap: GapMarker, position: str | None) -> None:
        """Call on an empty batch (flush first), so the gap sits after every event kept before it."""
        self.pending.gap = gap
        self.pending.cursor = position
        self.open()

    def move_cursor(self, position: str, at: float | None = None) -> None:
        """A position with nothing to keep (an offset-only heartbeat): the cursor moves, nothing else."""
        self.pending.cursor = position
        self.open(at)

    async def run_timer(self) -> None:
        """Commit a batch older than max_delay even when no further message comes."""
        while True:
            if self._since is None:
                await self._opened.wait()
                self._opened.clear()
                continue
            # Sleep to the deadline itself: a loop's timers may wake a millisecond early (Qt's does), and
            # half-period ticks then missed the deadline by a whole tick (commits at 150 ms instead of 100 ms).
            left = self._since + self._max_delay - time.time()
            if left > TIMER_SLACK:
                await asyncio.sleep(left)
            else:
                try:
                    await self.flush()
                except StorageError as exc:
                    self.failure = exc
                    self.on_failure()  # the follower pauses; the timer waits for the next batch

    async def flush(self) -> None:
        """Hand the pending batch to the sink (in order); raises the first commit failure."""
        batch, self.pending, self._since, self.pending_bytes = self.pending, Batch(), None, 0
        if batch.empty:
            return
        future = asyncio.wrap_future(self._sink.submit(batch))
        future.add_done_callback(self._committed)
        self._inflight.append(future)
        while len(self._inflight) >= IN_FLIGHT:
            await self._oldest()
        if self.failure is not None:
            raise self.failure

    async def drain(self) -> None:
        """Commit everything pending and wait for it (before reconnecting and at shutdown)."""
        await self.flush()
        while self._inflight:
            await self._oldest()
        if self.failure is not None:
            raise self.failure

    async def discard(self) -> None:
        """After a failed commit: wait out what is in flight and drop the pending batch."""
        while self._inflight:
            try:
                await self._oldest()
            except Exception as exc:  # each fails like the first one; already reported
                log.debug("%s: a queued batch failed too: %s", self._name, exc)
        self.pending, self._since, self.failure, self.pending_bytes = Batch(), None, None, 0

    async def _oldest(self) -> None:
        """Wait for the oldest commit in flight; it stays in flight until it is done. A cancellation of the
        waiting task (a stop, a pause, a nudge while a batch waits its turn on the writer) never cancels the
        commit: the sink would skip that batch and commit the ones queued behind it, their cursor past events
        never stored."""
        future = self._inflight[0]
        try:
            await asyncio.shield(future)
        finally:
            if future.done() and self._inflight and self._inflight[0] is future:
                self._inflight.popleft()

    def _committed(self, future: asyncio.Future[CommitResult]) -> None:
        if future.cancelled():
            return
        exc = future.exception()
        if exc is not None:
            self.failure = exc if isinstance(exc, StorageError) else StorageError(str(exc))
            level = logging.INFO if self.failure.expected else logging.ERROR
            log.log(level, "%s: could not store a batch: %s", self._name, exc)
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
        self.on_kept(result)
        for callback in list(self.on_commit):
            callback(result)
