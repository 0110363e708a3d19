"""Drives an Evaluator on asyncio, one step at a time, in the evaluator's own process (evaluator_child.py).

    kick() (a commit, said by the parent) ──▶ AlertRunner ──run_alert_job──▶ Evaluator.step on its connection
                                              ◀── StepResult (loop thread) ──▶ on_step, on_alerts

At most one step is in flight; kicks that arrive meanwhile fold into one more step after it. Without commits a
step is still kicked every `evaluator.tick_s`: alerts resolve by going quiet, and triage made in another process
reaches the observers (values/alert_lifecycle.py). A failed step
(disk full, another process on the same file) is logged and retried a little later; the evaluator reloads its
state from the store first, so nothing is raised twice.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections.abc import Callable
from typing import Final, Protocol, TypeVar

from tenant_events.alerts.evaluator import Evaluator, StepResult
from tenant_events.errors import StorageError
from tenant_events.store import AlertLedger

log = logging.getLogger(__name__)
RETRY_AFTER: Final = 2.0  # seconds before a failed step is tried again, doubling up to RETRY_CAP
RETRY_CAP: Final = 60.0
T = TypeVar("T")


class AlertJobs(Protocol):
    """Where a step runs: a connection that may write alerts, used at once on the loop's thread (the rules' own
    process, store/alert_connection.py) or on a writer's thread (tests, bench/)."""

    def run_alert_job(self, fn: Callable[[AlertLedger], T]) -> concurrent.futures.Future[T]: ...


class AlertRunner:
    """Keeps an evaluator caught up with a writer's commits; all methods on the event loop's thread."""

    def __init__(self, evaluator: Evaluator, writer: Callable[[], AlertJobs | None]) -> None:
        self.evaluator = evaluator
        self.on_alerts: list[Callable[[StepResult], None]] = []
        self.on_step: list[Callable[[StepResult], None]] = []  # every step, with or without alerts
        self.on_failure: list[Callable[[BaseException], None]] = []  # every failed step (retried later)
        self._writer = writer
        self._inflight: asyncio.Future[StepResult] | None = None
        self._again = False
        self._retry: asyncio.TimerHandle | None = None
        self._idle = asyncio.Event()
        self._idle.set()
        self._closed = False
        self._retry_delay = RETRY_AFTER
        self.failures = 0
        self._committed_upto = 0  # the newest seq a kick's CommitResult reported
        self._stepped = asyncio.Event()  # set after each step (drain checks how far it got)
        self._tick: asyncio.TimerHandle | None = None

    def kick(self, result: object = None) -> None:
        """Evaluate what is committed (soon); takes the CommitResult when it is a commit callback."""
        last = getattr(result, "last_seq", None)
        if isinstance(last, int) and last > self._committed_upto:
            self._committed_upto = last
        if self._closed:
            return
        if self._inflight is not None:
            self._again = True
            return
        writer = self._writer()
        if writer is None:
            return
        self._again = False
        self._idle.clear()
        try:
            self._inflight = asyncio.wrap_future(writer.run_alert_job(self.evaluator.step))
        except StorageError as exc:  # the writer is closing
            log.debug("alert evaluation not started: %s", exc)
            self._idle.set()
            return
        self._inflight.add_done_callback(self._done)

    async def drain(self) -> None:
        """Until every event committed before the call has been evaluated (or a step failed). Commits that arrive
        meanwhile are left to the steps they kick: a drain during a catch-up used to chase the stream's tail until
        the whole backlog was stored and evaluated (bench/ingest.py timed the rules consumer over the simulator's
        entire backlog instead of its --events)."""
        target = self._committed_upto
        self.kick()
        while not self._idle.is_set():
            if target and (self.evaluator.watermark or 0) >= target:
                return
            self._stepped.clear()
            await self._stepped.wait()
            if self._inflight is None and self._again:
                self.kick()

    async def idle(self) -> None:
        """Until no step is in flight (after `close()`: none will be again)."""
        await self._idle.wait()

    def close(self) -> None:
        """No more steps (the database is closing); one in flight still completes."""
        self._closed = True
        if self._retry is not None:
            self._retry.cancel()
        if self._tick is not None:
            self._tick.cancel()

    def _done(self, future: asyncio.Future[StepResult]) -> None:
        self._inflight = None
        self._stepped.set()
        if future.cancelled():
            self._idle.set()
            return
        exc = future.exception()
        if exc is not None:
            self.failures += 1
            for failed in list(self.on_failure):
                failed(exc)
            log.warning("alert rules could not be evaluated (retrying in %.0f s): %s", self._retry_delay, exc)
            if not self._closed and self._retry is None:
                self._retry = asyncio.get_running_loop().call_later(self._retry_delay, self._retry_now)
                self._retry_delay = min(self._retry_delay * 2, RETRY_CAP)
            self._idle.set()
            return
        self._retry_delay = RETRY_AFTER
        result = future.result()
        self._arm_tick()
        for callback in list(self.on_step):
            callback(result)
        if result.changed:
            tell(self.on_alerts, result)
        if self._again or result.more:  # (a step cut at its time bound goes on after what the loop has heard)
            self.kick()
        if self._inflight is None:
            self._idle.set()

    def _arm_tick(self) -> None:
        if self._tick is not None:
            self._tick.cancel()
        if not self._closed:
            self._tick = asyncio.get_running_loop().call_later(self.evaluator.tick_s, self._ticked)

    def _ticked(self) -> None:
        self._tick = None
        self.kick()

    def _retry_now(self) -> None:
        self._retry = None
        self.kick()


def tell(observers: list[Callable[[StepResult], None]], result: StepResult) -> None:
    """Hand a step's result to each observer; one that fails is logged and keeps no other from hearing it."""
    for callback in list(observers):
        try:
            callback(result)
        except Exception:
            log.exception("an alert callback failed")
