"""The alert rules' process: evaluates a tenant database's committed events beside the process that stores them.

    parent (stores)  ──stdin: start, kick, rules──▶  this process ──▶ AlertRunner ──▶ Evaluator.step
                     ◀──stdout: each step's result──                       on its own connection

Started by evaluator_process.py as `tenant-events _alert-evaluator` (the same interpreter, or the frozen app),
with PR_SET_PDEATHSIG: it ends when its parent does, even after SIGKILL, and when its stdin closes (the parent
stopped it). Storing never waits for it: the parent only tells it that something was committed (a kick, five
bytes written after each commit), and it reads the rows by seq on its own connection (a catch-up's at a lower CPU
priority).
What it raises it writes itself, with its watermark, in one transaction (store/alerts_table.py), so a SIGKILL of
either process loses and repeats nothing.

Live, one thread does everything: its event loop waits on stdin and on the runner's timers, and a step runs on it
at once, at the parent's priority (store/alert_connection.py): a kick wakes the very thread that evaluates, and
nothing of a lower priority stands between a commit and its alert (at a lower priority, every wake-up waited for
the machine's other work: on a loaded machine an alert came seconds late). A catch-up (the rules more than a
chunk behind the store) runs on a second thread at a lower priority (cli/main.py ALERT_CATCH_UP_NICENESS,
which also loads this module on it), in steps of STEP_S at most, each waiting first while the store takes in a
burst (StoreBusy, for CATCH_UP_GRACE_S of the catch-up at most): when both want a core the store gets the larger
share, and the loop hears the parent between two steps; its reads of rows and its transactions are handed to the
loop's thread (`on_this_loop`, store/alert_connection.py HandedLedger), so no lock of the store waits for a thread
at a lower priority. Kicks that come during a step wait in the pipe and fold into one step after it. Frames on both pipes are a tag byte, a 4-byte length and a pickle: both ends are this program.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import pickle
import struct
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any, Final, TypeVar

from tenant_events.alert_settings import AlertSettings
from tenant_events.alerts import gc_policy
from tenant_events.alerts.evaluator import Evaluator
from tenant_events.alerts.from_settings import build_evaluator
from tenant_events.alerts.runner import AlertRunner
from tenant_events.store import AlertLedger
from tenant_events.store.alert_connection import AlertConnection, FilesGone, Hand

log = logging.getLogger(__name__)
T = TypeVar("T")
CHILD_ARG: Final = "_alert-evaluator"  # the hidden first argument of `tenant-events` that runs this process
# Events the rules may be behind the store for a step to run on the loop's thread, at the parent's priority: fewer
# than a catch-up's batch (the engine's 1,000 events), so that while the store catches up every step of the rules
# is a catch-up's, at the lower priority, however closely they follow (at 5,000 they followed a long
# catch-up at the parent's priority once they had come within 5,000 events of it, and took CPU from the store).
LIVE_STEP: Final = 500
STEP_S: Final = 0.25  # seconds a step evaluates at most before the loop hears the parent again
# A catch-up's steps wait while the store takes in a burst (a commit within STORE_PAUSE_S), for CATCH_UP_GRACE_S at
# most: on two cores, the rules evaluating beside the store's threads kept them waiting for a core (a 100,000-event
# backlog stored at 74% of its rate with no rules, 94% with them waiting); a longer burst is not left unevaluated.
STORE_PAUSE_S: Final = 0.2
CATCH_UP_GRACE_S: Final = 5.0
EXIT_FILES_GONE: Final = 75  # a file of the database was removed under this process (EX_TEMPFAIL)
_HEAD: Final = struct.Struct("!cI")
START, KICK, RULES = b"S", b"K", b"R"  # parent → child
STEP, FAILED = b"T", b"F"  # child → parent: a step's result, a failed step's reason


def frame(tag: bytes, message: object = None) -> bytes:
    data = b"" if message is None else pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEAD.pack(tag, len(data)) + data


class Frames:
    """Cuts the bytes read from a pipe into (tag, message) frames, however the reads split them."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[tuple[bytes, Any]]:
        buffer = self._buffer
        buffer += data
        out: list[tuple[bytes, Any]] = []
        while len(buffer) >= _HEAD.size:
            tag, size = _HEAD.unpack_from(buffer)
            if len(buffer) < _HEAD.size + size:
                break
            body = bytes(buffer[_HEAD.size : _HEAD.size + size])
            del buffer[: _HEAD.size + size]
            out.append((tag, pickle.loads(body) if body else None))  # noqa: S301 - this same program's
        return out


def rules_from(settings_json: str, tenant: str, by_received: bool) -> Evaluator:
    """The evaluator of the settings' valid rules (the parent already refused invalid ones where it must)."""
    settings = AlertSettings.model_validate_json(settings_json)
    evaluator = build_evaluator(settings, tenant, strict=False, by_received=by_received)
    evaluator.step_s = STEP_S
    return evaluator


def on_this_loop() -> Hand:
    """A `Hand` that runs work on the running loop's thread (at once when called there)."""
    loop, owner = asyncio.get_running_loop(), threading.get_ident()

    def hand(work: Callable[[], T]) -> T:
        if threading.get_ident() == owner:
            return work()
        future: concurrent.futures.Future[T] = concurrent.futures.Future()

        def call() -> None:
            try:
                future.set_result(work())
            except BaseException as exc:  # raised on the thread that waits
                future.set_exception(exc)

        loop.call_soon_threadsafe(call)
        return future.result()

    return hand


class StoreBusy:
    """When the parent last said it committed: a catch-up's steps wait while the store takes in a burst."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._last = -1e9
        self._stop = threading.Event()

    def committed(self) -> None:
        self._last = self._clock()

    def stop(self) -> None:
        self._stop.set()

    def wait_for_a_pause(self, until: float) -> None:
        """Until no commit came for STORE_PAUSE_S, or `until` (the catch-up's grace is over), or a stop."""
        while not self._stop.is_set():
            now = self._clock()
            left = min(self._last + STORE_PAUSE_S, until) - now
            if left <= 0:
                return
            self._stop.wait(min(left, STORE_PAUSE_S))


class PlacedSteps:
    """The runner's AlertJobs: a live step at once on the loop's thread, a catch-up's on a lower-priority one,
    after the store's burst (for CATCH_UP_GRACE_S at most)."""

    def __init__(
        self,
        store: AlertConnection,
        watermark: Callable[[], int | None],
        catch_up: ThreadPoolExecutor,
        busy: StoreBusy,
    ) -> None:
        self._store = store
        self._watermark = watermark  # the evaluator's (None: its state is loaded first, a catch-up's work)
        self._on_loop = on_this_loop()  # a catch-up's rows and transactions (store/alert_connection.py)
        self._pool = (
            catch_up  # one thread, at a lower priority (cli/main.py, which started this process on it)
        )
        self._busy = busy
        self._grace_ends: float | None = None  # while behind: when the catch-up stops waiting for the store

    def run_alert_job(self, fn: Callable[[AlertLedger], T]) -> concurrent.futures.Future[T]:
        mark = self._watermark()
        try:
            live = mark is not None and self._store.newest_seq() - mark <= LIVE_STEP
        except Exception:  # the step itself says what is wrong (and the runner retries)
            live = True
        if live:
            self._grace_ends = None
            return self._store.run_alert_job(fn)
        if self._grace_ends is None:
            self._grace_ends = time.monotonic() + CATCH_UP_GRACE_S
        until = self._grace_ends

        def step() -> T:
            self._busy.wait_for_a_pause(until)
            return self._store.run_alert_job(fn, self._on_loop).result()

        return self._pool.submit(step)

    def close(self) -> None:
        self._busy.stop()
        self._pool.shutdown(wait=True)


def main(catch_up: ThreadPoolExecutor) -> int:
    """The process's body: the start frame, then steps until stdin closes; `catch_up` runs catch-up steps."""
    logging.basicConfig(level=logging.WARNING, format="tenant-events alerts: %(message)s")
    gc_policy.for_rules()
    frames, start, rest = Frames(), None, []
    while start is None:
        data = os.read(0, 1 << 16)
        if not data:
            return 0
        got = frames.feed(data)
        if got:
            start, rest = got[0][1], got[1:]
    asyncio.run(_serve(start, frames, rest, sys.stdout.buffer, catch_up))
    return 0


async def _serve(
    start: dict[str, Any],
    frames: Frames,
    early: list[tuple[bytes, Any]],
    out: IO[bytes],
    catch_up: ThreadPoolExecutor,
) -> None:
    loop = asyncio.get_running_loop()
    tenant, by_received = str(start["tenant"]), bool(start["by_received"])
    evaluator = rules_from(start["settings"], tenant, by_received)
    evaluator.resume = start.get("resume")
    store = AlertConnection(Path(start["database"]))
    runner: AlertRunner
    busy = StoreBusy()
    steps = PlacedSteps(store, lambda: runner.evaluator.watermark, catch_up, busy)
    runner = AlertRunner(evaluator, lambda: steps)

    def send(data: bytes) -> None:
        out.write(data)
        out.flush()

    runner.on_step.append(lambda result: send(frame(STEP, result)))

    def failed(exc: BaseException) -> None:
        if isinstance(exc, FilesGone):  # ended without closing the connection (alert_connection.py); the
            out.flush()  # parent starts another, and the writer says what happened to the files
            os._exit(EXIT_FILES_GONE)
        send(frame(FAILED, str(exc)))

    runner.on_failure.append(failed)
    closed = asyncio.Event()

    def heard(got: list[tuple[bytes, Any]]) -> None:
        for tag, message in got:
            if tag == RULES:
                runner.evaluator = rules_from(message, tenant, by_received)
        if got:  # any whole word from the parent: evaluate what is committed (once, however many kicks)
            busy.committed()
            runner.kick()

    def readable() -> None:
        try:
            data = os.read(0, 1 << 16)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            loop.remove_reader(0)
            closed.set()
            return
        heard(frames.feed(data))

    os.set_blocking(0, False)
    loop.add_reader(0, readable)
    heard([*early, (KICK, None)])  # (and what was committed before this process started)
    await closed.wait()
    runner.close()
    await runner.idle()
    steps.close()
    store.close()
