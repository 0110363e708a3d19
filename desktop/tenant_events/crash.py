"""Crash reports: a readable, redacted file per unexpected error, and a marker that tells the next start.

A bug anywhere (CLI command, the app's error sink) writes `crash-<time>.txt` to the log dir: version, platform,
the command (arguments redacted), the traceback and the last log lines, with tokens masked as the log does.
Hard crashes that never reach Python (a segfault in a library) go to `fatal.log` through faulthandler. Each
running instance has its own run marker, created at start and removed by that instance at a clean exit; a
marker whose process is gone at the next start means that run died, so the app can say so, with its report,
while it resumes from its stored cursor as usual.
"""

from __future__ import annotations

import contextlib
import faulthandler
import json
import os
import platform
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Final

from tenant_events import __version__
from tenant_events.logs import RING, redact

MARKER_DIR: Final = "running"  # one <pid>.json per running instance
LEGACY_MARKER: Final = "running.pid"  # the single shared marker of earlier versions
_fatal_file: IO[str] | None = None


def write_report(log_dir: Path, exc: BaseException, context: str = "") -> Path | None:
    """Write a redacted crash report for `exc`; None if the log dir cannot be written (never raises)."""
    tb: TracebackType | None = exc.__traceback__
    lines = [
        f"Tenant Events {__version__} crash report — {time.strftime('%Y-%m-%d %H:%M:%S %z')}",
        f"Python {platform.python_version()} on {platform.platform()}; frozen={getattr(sys, 'frozen', False)}",
        f"Command: {redact(' '.join(sys.argv))}",
    ]
    if context:
        lines.append(f"Where: {redact(context)}")
    lines += ["", "Traceback:", redact("".join(traceback.format_exception(type(exc), exc, tb))).rstrip()]
    recent = list(RING.records)[-100:]
    if recent:
        lines += ["", "Last log lines:", *recent]
    try:
        log_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = log_dir / f"crash-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.txt"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write("\n".join(lines) + "\n")
        return path
    except OSError:
        return None


def enable_fatal_log(log_dir: Path) -> None:
    """Send tracebacks of hard crashes (signals, aborts) to `fatal.log` in the log dir."""
    global _fatal_file
    try:
        log_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(log_dir / "fatal.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        _fatal_file = os.fdopen(fd, "a", encoding="utf-8")
        faulthandler.enable(file=_fatal_file)
    except OSError:
        faulthandler.enable()


def latest_report(log_dir: Path) -> Path | None:
    """The newest crash report, if any."""
    reports = sorted(log_dir.glob("crash-*.txt"), key=lambda p: p.stat().st_mtime)
    return reports[-1] if reports else None


@dataclass(frozen=True)
class DeadRun:
    """An earlier instance that never removed its marker: it was killed, crashed hard or lost power."""

    pid: int
    started: float  # epoch seconds; 0 when unknown (a marker of an older version)
    report: Path | None  # its redacted crash report, or the hard-crash log it wrote, if any


class RunMarker:
    """`with RunMarker(data_dir, log_dir) as marker:` — this instance's marker, and the runs that died before.

    Each instance keeps its own marker, `running/<pid>.json`, and removes only that one at a clean exit, so a
    second start that hands over to the running instance (or any other process) never touches the running
    instance's marker. A marker whose process is gone is a run that died: `dead_runs` lists those, and their
    markers are then removed, so each death is told once.
    """

    def __init__(self, data_dir: Path, log_dir: Path | None = None) -> None:
        self.dir = data_dir / MARKER_DIR
        self.legacy = data_dir / LEGACY_MARKER
        self.log_dir = log_dir if log_dir is not None else data_dir / "logs"
        self.path = self.dir / f"{os.getpid()}.json"
        self.dead_runs: list[DeadRun] = []

    @property
    def previous_run_crashed(self) -> bool:
        return bool(self.dead_runs)

    def __enter__(self) -> RunMarker:
        self.dead_runs = self._collect_dead()
        with contextlib.suppress(OSError):
            self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            mine = {"pid": os.getpid(), "started": time.time(), "start_id": _start_id(os.getpid())}
            self.path.write_text(json.dumps(mine), encoding="utf-8")
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        if exc_type is None or issubclass(exc_type, (KeyboardInterrupt, SystemExit)):
            with contextlib.suppress(OSError):
                self.path.unlink(missing_ok=True)

    def _collect_dead(self) -> list[DeadRun]:
        dead: list[DeadRun] = []
        candidates = sorted(self.dir.glob("*.json")) if self.dir.is_dir() else []
        for path in [*candidates, self.legacy]:
            run = _read_marker(path)
            if run is None or _running(*run):
                continue
            pid, started = run[0], run[2]
            dead.append(DeadRun(pid, started, _report_of(self.log_dir, pid, started)))
            with contextlib.suppress(OSError):
                path.unlink()  # its owner is gone: told once, here
        return sorted(dead, key=lambda d: d.started)


def _read_marker(path: Path) -> tuple[int, str | None, float] | None:
    """(pid, start id, started) of a marker file; None when there is none or it is unreadable."""
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if text.isdigit():  # `running.pid` of an older version: the pid alone
        return int(text), None, 0.0
    try:
        data = json.loads(text)
        return int(data["pid"]), data.get("start_id"), float(data.get("started", 0.0))
    except (ValueError, KeyError, TypeError):
        return None


def _running(pid: int, start_id: str | None, _started: float = 0.0) -> bool:
    """Is the marker's own process still running (not merely some process that reused its pid)?"""
    if pid <= 0 or not _alive(pid):
        return False
    return start_id is None or _start_id(pid) in (None, start_id)


def _start_id(pid: int) -> str | None:
    """The kernel's start time of `pid` (Linux /proc), which tells a reused pid from the original."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[-1].split()[19]  # field 22, counted after the parenthesised name


def _report_of(log_dir: Path, pid: int, started: float) -> Path | None:
    """The redacted report that run wrote (crash-<time>-<pid>.txt), else the hard-crash log if it grew since."""
    reports = sorted(log_dir.glob(f"crash-*-{pid}.txt"), key=lambda p: p.stat().st_mtime)
    if reports and reports[-1].stat().st_mtime >= started:
        return reports[-1]
    fatal = log_dir / "fatal.log"
    with contextlib.suppress(OSError):
        if started and fatal.stat().st_size > 0 and fatal.stat().st_mtime >= started:
            return fatal
    return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
