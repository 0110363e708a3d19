"""The alert rules of a tenant database run in a process of their own (evaluator_child.py); this is its handle.

    TenantMonitor.on_commit ──kick()──▶ EvaluatorProcess ──"kick"──▶ child: steps on its own connection
                                              ◀── StepResult ── (a reader thread, then the loop thread) ──▶ on_alerts

Storing never waits for evaluating: a kick is a few bytes on a pipe, at most one unanswered at a time, and the
child reads the committed rows itself. The child dies with this process (PR_SET_PDEATHSIG, as the demo
simulator) and is started again, a little later each time, when it dies on its own; it resumes from its stored
watermark, so nothing is raised twice or missed. `attach` wires it to a `TenantMonitor`: the events of the
last batches are evaluated before the database closes (`drain`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final

from tenant_events.alerts.evaluator import StepResult
from tenant_events.alerts.evaluator_child import CHILD_ARG, EXIT_FILES_GONE, read_frame, write_frame
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
        self._kicked = False  # a kick the child has not answered with a step yet
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
        if not self._kicked:
            self._kicked = self._send(("kick",))

    def replace_rules(self, settings_json: str) -> None:
        """Evaluate with these rules from the child's next step on (it keeps its place)."""
        self._start["settings"] = settings_json
        self._send(("rules", settings_json))

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
        if proc is not None and proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()

    # -- the child -------------------------------------------------------------------------------------------
    def _spawn(self) -> None:
        if self._closed or self._paused:
            return
        prctl = _prctl() if sys.platform.startswith("linux") else None
        proc = subprocess.Popen(
            child_argv(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            preexec_fn=_die_with_parent(prctl) if prctl is not None else None,
        )
        self._proc, self._kicked = proc, False
        self._exited.clear()
        assert proc.stdout is not None
        threading.Thread(
            target=self._listen, args=(proc, proc.stdout), name="alerts-child", daemon=True
        ).start()
        self._send(self._start)

    def _send(self, message: object) -> bool:
        proc = self._proc
        if proc is None or proc.stdin is None or proc.stdin.closed:
            return False
        try:
            write_frame(proc.stdin, message)
        except (OSError, ValueError):  # the child is gone: _gone starts another
            return False
        return True

    def _listen(self, proc: subprocess.Popen[bytes], out: IO[bytes]) -> None:
        """The reader thread: each frame to the loop thread, then the child's end."""
        while True:
            try:
                result = read_frame(out)
            except (EOFError, OSError, ValueError):
                break
            self._loop.call_soon_threadsafe(self._heard, result)
        out.close()
        code = proc.wait()
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
            self._loop.call_soon_threadsafe(self._gone, proc, code)

    def _heard(self, result: Any) -> None:
        if not isinstance(result, StepResult):  # ("failed", why): logged by the child, which tries again
            self.failures += 1
            self._kicked = False
            self._stepped.set()
            return
        self._restart_delay = RESTART_AFTER
        self.watermark = result.watermark
        if result.watermark:  # a team's evaluation, if any, is adopted: a restart goes on from the store
            self._start["resume"] = None
        self._kicked = False
        self._stepped.set()
        if result.changed:
            tell(self.on_alerts, result)
        if self._committed_upto > result.watermark:
            self.kick()

    def _gone(self, proc: subprocess.Popen[bytes], code: int) -> None:
        if proc is not self._proc:
            return
        with contextlib.suppress(OSError):
            if proc.stdin is not None:
                proc.stdin.close()
        self._exited.set()
        self._stepped.set()
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

    async def before_close() -> None:
        with contextlib.suppress(StorageError):
            await runner.drain()
        await runner.pause()  # no connection of the rules outlives the writer's

    monitor.before_close.append(before_close)
    return runner
