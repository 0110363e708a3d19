"""The loop every follower runs: attempt, keep what it read, decide the wait, attempt again — until a terminal end.

    run() ─▶ read the kept cursor ─▶ loop: stopped? ─▶ STOPPED (returns)
                                          paused?  ─▶ PAUSED, wait for resume()
                                          too soon after the last start? ─▶ wait out `min_interval`
                                          CONNECTING ─▶ _attempt() ─▶ Outcome ─▶ drain the batches
                                              storage failed ─▶ PAUSED, retry, resume from the kept cursor
                                              terminal ─▶ returns;  interrupted ─▶ again (after the floor)
                                              else ─▶ wait (its delay or the backoff; short-lived: at
                                                      least the backoff, outcomes.py) ─▶ again

The stream engine (engine.py) follows a tenant over HTTP; the hub viewer (hub/viewer.py) follows it through a
hub. Both subclass `FollowLoop` and write only their attempt and where their position comes from.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Final

from tenant_events.cancelling import cancel_until_done
from tenant_events.errors import StorageError
from tenant_events.store.records import CommitResult, CursorState
from tenant_events.stream.backoff import bounded
from tenant_events.stream.batching import BatchKeeper
from tenant_events.stream.outcomes import USE_BACKOFF, Outcome, Reason, Reconnects
from tenant_events.stream.sink import BatchSink
from tenant_events.values.stream_states import EngineStats, StateChange, StreamState, state_line

log = logging.getLogger(__name__)
# An attempt still running this long after it was cancelled lost the cancellation (cancelling.py): it is
# cancelled again. Longer than an attempt's own clean-up (the hub viewer's: at most a second).
CANCEL_AGAIN_S: Final = 2.0


class FollowLoop(ABC):
    """Follows one source until stopped or a terminal state; observe with the `on_*` callback lists."""

    def __init__(
        self,
        name: str,
        sink: BatchSink,
        reconnects: Reconnects,
        *,
        max_events: int,
        max_delay: float,
        max_bytes: int | None = None,
        storage_retry: float = 5.0,
    ) -> None:
        self._name = name
        self._writer = sink
        self._reconnects = reconnects
        self._storage_retry = bounded(storage_retry, default=5.0, low=0.5)
        self.on_state: list[Callable[[StateChange], None]] = []
        self.stats = EngineStats()
        self.state = StateChange(StreamState.STOPPED, "not started")
        self._batches = BatchKeeper(
            sink,
            self.stats,
            [],
            name=name,
            max_events=max_events,
            max_delay=bounded(max_delay, default=0.1, low=0.001, high=60.0),
            max_bytes=max_bytes,
        )
        self._batches.on_failure = lambda: self._interrupt_attempt("storage error")
        self._wake = asyncio.Event()
        self._paused = False
        self._stopping = False
        self._interrupt: str | None = None
        self._attempt_task: asyncio.Task[Outcome] | None = None

    @property
    def on_commit(self) -> list[Callable[[CommitResult], None]]:
        """Observers of each commit, called on the loop's thread. An owner may hand down its own list (assign it)
        instead of forwarding: `on_state` likewise."""
        return self._batches.on_commit

    @on_commit.setter
    def on_commit(self, observers: list[Callable[[CommitResult], None]]) -> None:
        self._batches.on_commit = observers

    # -- what a follower writes ---------------------------------------------------------------------------
    @abstractmethod
    async def _attempt(self) -> Outcome:
        """One connection: read until it ends; its messages go into `self._batches`."""

    @abstractmethod
    def _connecting_text(self) -> str:
        """The message of the CONNECTING state before each attempt."""

    def _start_from(self, stored: CursorState) -> StateChange | None:
        """Take the kept cursor at start; a state change returned ends run() before any attempt."""
        self._resume_from(stored)
        return None

    @abstractmethod
    def _resume_from(self, stored: CursorState) -> None:
        """Take the kept cursor again after a storage failure."""

    async def _follow(self) -> StateChange:
        """The loop, inside whatever the attempts share (the engine's HTTP client)."""
        return await self._loop()

    def _waiting_text(self, outcome: Outcome, delay: float) -> str:
        """The message shown while waiting `delay` s after `outcome` (state_line tells the wait from retry_at)."""
        return outcome.message

    def _storage_text(self, why: str, delay: float) -> str:
        return why

    def _log_line(self, change: StateChange) -> str:
        return state_line(change)

    # -- control (call from the follower's loop) -----------------------------------------------------------
    def pause(self) -> None:
        self._paused = True
        self._interrupt_attempt("paused")

    def resume(self) -> None:
        self._paused = False
        self._wake.set()

    def nudge(self) -> None:
        """Reconnect now (resume from sleep, network back); skips any backoff wait."""
        self._interrupt_attempt("nudged")

    def stop(self) -> None:
        self._stopping = True
        self._interrupt_attempt("stopped")

    def _interrupt_attempt(self, why: str) -> None:
        self._interrupt = why
        self._wake.set()
        if self._attempt_task is not None:
            # Once is not always enough: a cancellation lost in a library's wait (cancelling.py) left a stopped
            # hub viewer reading heartbeats for good.
            cancel_until_done(self._attempt_task, CANCEL_AGAIN_S)

    # -- the loop ------------------------------------------------------------------------------------------
    async def run(self) -> StateChange:
        """Follow until stopped or a terminal state; returns that state change (STOPPED, SIGNED_OUT or ERROR)."""
        stored = await asyncio.to_thread(self._writer.cursor_state)
        ended = self._start_from(stored)
        if ended is not None:
            return ended
        self.stats.last_event_time, self.stats.cursor_updated_at = stored.last_event_time, stored.updated_at
        self.stats.duplicates_dropped = await asyncio.to_thread(self._writer.duplicates_total)
        timer = asyncio.create_task(self._batches.run_timer(), name=f"flush-{self._name}")
        try:
            return await self._follow()
        finally:
            timer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await timer
            with contextlib.suppress(StorageError):
                await self._batches.drain()
            if not self.state.state.terminal:
                self._emit(StreamState.STOPPED, "stopped", Reason.STOPPED)

    async def _loop(self) -> StateChange:
        clock = asyncio.get_running_loop().time
        next_start = -math.inf  # no attempt before `min_interval` after the previous one started (no storm)
        while True:
            if self._stopping:
                return self._emit(StreamState.STOPPED, "stopped", Reason.STOPPED)
            if self._paused:
                self._emit(StreamState.PAUSED, "paused", Reason.PAUSED)
                self._wake.clear()
                while self._paused and not self._stopping:
                    await self._wake.wait()
                    self._wake.clear()
                continue
            too_soon = next_start - clock()
            if too_soon > 0:  # a nudge ends this wait early, so look again: stopped, paused, still too soon
                await self._sleep(too_soon)
                continue
            started = clock()
            next_start = started + self._reconnects.min_interval
            self._interrupt = None
            self._emit(StreamState.CONNECTING, self._connecting_text(), Reason.CONNECTING)
            outcome = await self._attempt_outcome()
            lived = clock() - started
            try:
                await self._batches.drain()
            except StorageError as exc:
                outcome = Outcome(StreamState.PAUSED, str(exc), Reason.STORAGE)
            if outcome.reason is Reason.STORAGE or self._batches.failure is not None:
                await self._wait_for_storage(outcome.message)
                continue
            self._reconnects.ended(outcome, lived)
            if outcome.terminal:
                return self._emit(outcome.state, outcome.message, outcome.reason)
            if outcome.reason is Reason.INTERRUPTED:
                continue
            self.stats.reconnects += 1
            delay = self._reconnects.delay(outcome, lived)
            if delay <= 0:
                self._emit(outcome.state, outcome.message, outcome.reason)
                continue
            self._emit(outcome.state, self._waiting_text(outcome, delay), outcome.reason, time.time() + delay)
            await self._sleep(delay)

    async def _attempt_outcome(self) -> Outcome:
        self._attempt_task = asyncio.create_task(self._attempt(), name=f"follow-{self._name}")
        try:
            return await self._attempt_task
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise
            return Outcome(StreamState.CONNECTING, f"reconnecting ({self._interrupt})", Reason.INTERRUPTED)
        except StorageError as exc:
            return Outcome(StreamState.PAUSED, str(exc), Reason.STORAGE)
        except Exception as exc:  # a bug: keep the traceback, keep following (with backoff)
            log.exception("%s: unexpected error while following", self._name)
            return Outcome(
                StreamState.RECONNECTING,
                f"internal error: {type(exc).__name__}: {exc}",
                Reason.INTERNAL_ERROR,
                USE_BACKOFF,
            )
        finally:
            self._attempt_task = None

    async def _wait_for_storage(self, why: str) -> None:
        """A commit failed (disk full, read-only, I/O error): pause, then resume from the KEPT cursor — the
        batches after the failed one were refused by the sink, so nothing past that cursor is kept — and let
        the source send the rest again (the stream pauses and resumes when space returns)."""
        await self._batches.discard()
        delay = self._storage_retry
        self._emit(StreamState.PAUSED, self._storage_text(why, delay), Reason.STORAGE, time.time() + delay)
        await self._sleep(delay)
        try:
            stored = await asyncio.to_thread(self._writer.resume_after_failure)
        except StorageError as exc:  # the database cannot even be read: the next round says so again
            self._batches.failure = exc
            return
        self._resume_from(stored)

    async def _sleep(self, delay: float) -> None:
        """Wait `delay` seconds unless nudged, paused or stopped."""
        self._wake.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), timeout=delay)

    def _emit(
        self, state: StreamState, message: str, reason: str, retry_at: float | None = None
    ) -> StateChange:
        change = StateChange(state, message, reason, retry_at)
        self.state = change
        log.info("%s: %s", self._name, self._log_line(change))
        for callback in list(self.on_state):
            callback(change)
        return change
