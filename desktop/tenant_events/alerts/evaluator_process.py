"""The alert rules of a tenant database run in a process of their own (evaluator_child.py); this is its handle.

    TenantMonitor.on_commit ──kick()──▶ EvaluatorProcess ──kick──▶ child: steps on its own connection
                                              ◀── each step's result (read by the event loop) ──▶ on_alerts

Storing never waits for evaluating: a kick is five bytes written to a pipe after each commit, never blocking
(when the child is busy and the pipe full, the bytes already there wake it), and the child reads the committed
rows itself. Its answers are read by the event loop itself (`add_reader`), so a step's alerts reach the observers
with no thread between. The child dies with this process (PR_SET_PDEATHSIG, as the demo simulator) and is
started again, a little later each time, when it dies on its own; it resumes from its stored watermark, so
nothing is raised twice or missed. `attach` wires it to a `TenantMonitor`: live, the events of the last batches are
evaluated before the database closes (`drain`); in a catch-up the child stops after its step in flight (a
quarter second) and the next start goes on from its stored watermark, so a stop is never held by a backlog.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from tenant_events.alerts.evaluator import StepResult
from tenant_events.alerts.evaluator_child import (
    CHILD_ARG,
    EXIT_FILES_GONE,
    FAILED,
    KICK,
    LIVE_STEP,
    RULES,
    START,
    STEP,
    Frames,
    frame,
)
from tenant_events.alerts.runner import tell
from tenant_events.demo_simulator import _die_with_parent, _prctl
from tenant_events.errors import StorageError

if TYPE_CHECKING:
    from tenant_events.monitor import TenantMonitor
    from tenant_events.store.team_state import TeamState

log = logging.getLogger(__name__)
RESTART_AFTER: Final = 1.0  # seconds before a child that died is started again, doubling up to RESTART_CAP
RESTART_CAP: Final = 30.0
AFTER_FILES_GONE: Final = 5.0  # seconds before a child that met removed database files is started again
_KICK: Final = frame(KICK)


def child_argv() -> list[str]:
    """`tenant-events _alert-evaluator` from this interpreter, or from the frozen app binary."""
    head = [sys.executable] if getattr(sys, "frozen", False) else [sys.executable, "-m", "tenant_events"]
    return [*head, CHILD_ARG]


class EvaluatorProcess:
    """Keeps a child process's rules caught up with a writer's commits; all methods on the event loop's thread."""

    def __init__(
        self, database: Path, tenant: str, settings_json: str, *, by_received: bool, resume: TeamState | None
    ) -> None:
        self.on_alerts: list[Callable[[StepResult], None]] = []
        self.watermark: int | None = None  # the last seq the child has evaluated, as it last said
        self.restarts = 0
        self.failures = 0  # steps the child said failed (it tries them again a little later)
        self._start = {
            "database": str(database),
            "tenant": tenant,
            "settings": settings_json,
            "by_received": by_received,
            "resume": resume,
        }
        self._loop = asyncio.get_running_loop()
        self._committed_upto = 0
        self._closed = False
        self._paused = False  # the child was ended with its database's writer; a kick starts it again
        self._out = bytearray()  # what the child's stdin did not take yet (it is busy): sent when it can
        self._frames = Frames()
        self._stepped = asyncio.Event()
        self._exited = asyncio.Event()
        self._proc: subprocess.Popen[bytes] | None = None
        self._restart_delay = RESTART_AFTER
        self._spawn()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def kick(self, result: object = None) -> None:
        """Evaluate what is committed (soon); takes the CommitResult when it is a commit callback."""
        last = getattr(result, "last_seq", None)
        if isinstance(last, int) and last > self._committed_upto:
            self._committed_upto = last
        if self._paused and not self._closed:  # the monitor started again
            self._paused = False
            self._spawn()
        if not self._out:  # (bytes still waiting wake the child as well)
            self._send(_KICK)

    def replace_rules(self, settings_json: str) -> None:
        """Evaluate with these rules from the child's next step on (it keeps its place)."""
        self._start["settings"] = settings_json
        self._send(frame(RULES, settings_json))

    async def drain(self) -> None:
        """Until every event committed before the call has been evaluated (or a step failed, or the child died:
        it resumes from its stored watermark when it is started again)."""
        target, failures = self._committed_upto, self.failures + self.restarts
        while (
            not self._closed and (self.watermark or 0) < target and self.failures + self.restarts == failures
        ):
            self._stepped.clear()
            self.kick()
            await self._stepped.wait()

    @property
    def live(self) -> bool:
        """Whether the child is at most a live step behind the last commit this process made (not in a
        catch-up)."""
        return self._committed_upto - (self.watermark or 0) <= LIVE_STEP

    @property
    def catching_up(self) -> bool:
        """Whether the child is running and more than a live step behind the last commit: the store's idle work
        (indexing, on the writer's thread) waits meanwhile (`attach`). Read from that thread too."""
        running = self._proc is not None and not self._exited.is_set() and not self._paused
        return running and not self._closed and not self.live

    async def idle(self) -> None:
        """Until the child has exited (after `close()`: it will not be started again)."""
        while self._proc is not None and not self._exited.is_set():
            await self._exited.wait()

    async def pause(self) -> None:
        """End the child (the database's writer closes); the next kick starts another."""
        self._paused = True
        self._end()
        await self.idle()

    def close(self) -> None:
        """No more steps: the child ends after the step in flight (its stdin closes)."""
        self._closed = True
        self._end()

    def _end(self) -> None:
        self._stepped.set()
        proc = self._proc
        self._out.clear()
        if proc is not None and proc.stdin is not None and not proc.stdin.closed:
            with contextlib.suppress(ValueError, OSError):
                self._loop.remove_writer(proc.stdin.fileno())
            with contextlib.suppress(OSError):
                proc.stdin.close()  # the child ends after its step in flight

    # -- the child -------------------------------------------------------------------------------------------
    def _spawn(self) -> None:
        if self._closed or self._paused:
            return
        prctl = _prctl() if sys.platform.startswith("linux") else None
        proc = subprocess.Popen(
            child_argv(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            bufsize=0,
            preexec_fn=_die_with_parent(prctl) if prctl is not None else None,
        )
        assert proc.stdin is not None and proc.stdout is not None
        self._proc, self._frames = proc, Frames()
        self._out.clear()
        self._exited.clear()
        os.set_blocking(proc.stdin.fileno(), False)
        os.set_blocking(proc.stdout.fileno(), False)
        self._loop.add_reader(proc.stdout.fileno(), self._readable, proc)
        self._send(frame(START, self._start))

    def _send(self, data: bytes) -> None:
        """Write to the child's stdin without blocking; what does not fit waits for the pipe to drain."""
        proc = self._proc
        if proc is None or proc.stdin is None or proc.stdin.closed:
            return
        self._out += data
        self._flush(proc)

    def _flush(self, proc: subprocess.Popen[bytes]) -> None:
        if proc is not self._proc or proc.stdin is None or proc.stdin.closed:
            return
        fd = proc.stdin.fileno()
        try:
            while self._out:
                del self._out[: os.write(fd, self._out)]
        except BlockingIOError:
            self._loop.add_writer(fd, self._flush, proc)
            return
        except OSError:  # the child is gone: its stdout's end starts another
            self._out.clear()
        self._loop.remove_writer(fd)

    def _readable(self, proc: subprocess.Popen[bytes]) -> None:
        """The child's stdout, read by the event loop: each frame to `_heard`, then the child's end."""
        assert proc.stdout is not None
        try:
            data = os.read(proc.stdout.fileno(), 1 << 20)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            for tag, message in self._frames.feed(data):
                if proc is self._proc:
                    self._heard(tag, message)
            return
        self._loop.remove_reader(proc.stdout.fileno())
        proc.stdout.close()
        self._reap(proc)

    def _reap(self, proc: subprocess.Popen[bytes]) -> None:
        """Its exit status, looked at until there (its stdout closes just before it exits)."""
        code = proc.poll()
        if code is None:
            self._loop.call_later(0.02, self._reap, proc)
        else:
            self._gone(proc, code)

    def _heard(self, tag: bytes, message: Any) -> None:
        if tag == FAILED:  # logged by the child, which tries again a little later
            self.failures += 1
            self._stepped.set()
            return
        if tag != STEP or not isinstance(message, StepResult):
            return
        result = message
        self._restart_delay = RESTART_AFTER
        self.watermark = result.watermark
        if result.watermark:  # a team's evaluation, if any, is adopted: a restart goes on from the store
            self._start["resume"] = None
        self._stepped.set()
        if result.changed:
            tell(self.on_alerts, result)

    def _gone(self, proc: subprocess.Popen[bytes], code: int) -> None:
        if proc is not self._proc:
            return
        self._end()
        self._exited.set()
        if self._closed or self._paused:
            return
        self.restarts += 1
        # Files removed under it: the writer of this process opens them again first (it looks each second);
        # closing its old connection could otherwise remove the files a new child's connection just made.
        delay = max(self._restart_delay, AFTER_FILES_GONE) if code == EXIT_FILES_GONE else self._restart_delay
        log.warning("alert evaluation stopped (exit code %s); started again in %.0f s", code, delay)
        self._loop.call_later(delay, self._spawn)
        self._restart_delay = min(self._restart_delay * 2, RESTART_CAP)


def attach(
    monitor: TenantMonitor, tenant: str, settings_json: str, *, by_received: bool, resume: TeamState | None
) -> EvaluatorProcess:
    """Evaluate `monitor`'s commits in a child process, starting with anything stored but not yet evaluated (a
    crash between a commit and its evaluation); the last commits are evaluated before the database closes. Call
    it once the monitor has started; it keeps working if the monitor is stopped and started again."""
    runner = EvaluatorProcess(
        monitor.database_file, tenant, settings_json, by_received=by_received, resume=resume
    )
    monitor.on_commit.append(runner.kick)
    # A catch-up's rules need a core to themselves once the store has caught up, and the store's indexing after it
    # (full-text index, directory, access history: ~9 s of CPU over a million events) would take it from them.
    # Nothing the rules raise waits for it: a catch-up's alerts are worded with the names the directory holds, and
    # said again once it has reached their events (alerts/evaluator.py `_name_late`).
    monitor.idle_waits_for.append(lambda: runner.catching_up)

    async def before_close() -> None:
        # live: the last commits' alerts now; a catch-up goes on from its watermark at the next start
        if runner.live:
            with contextlib.suppress(StorageError):
                await runner.drain()
        await runner.pause()  # (after its step in flight) no connection of the rules outlives the writer's

    monitor.before_close.append(before_close)
    return runner
