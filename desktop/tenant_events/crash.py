"""Crash reports: a readable, redacted file per unexpected error, and a marker that tells the next start.

A bug anywhere (CLI command, the app's error sink) writes `crash-<time>.txt` to the log dir: version, platform,
the command (arguments redacted), the traceback and the last log lines, with tokens masked as the log does.
Hard crashes that never reach Python (a segfault in a library) go to `fatal.log` through faulthandler. The
run marker is created at start and removed at a clean exit; finding it at the next start means the last run
died, so the app can say where the report is while it resumes from its stored cursor as usual.
"""

from __future__ import annotations

import contextlib
import faulthandler
import os
import platform
import sys
import time
import traceback
from pathlib import Path
from types import TracebackType
from typing import IO, Final

from tenant_events import __version__
from tenant_events.logs import RING, redact

MARKER_NAME: Final = "running.pid"
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


class RunMarker:
    """`with RunMarker(data_dir) as marker:` — `marker.previous_run_crashed` is True when the last run died."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / MARKER_NAME
        self.previous_run_crashed = False

    def __enter__(self) -> RunMarker:
        try:
            old_pid = int(self.path.read_text().strip() or 0)
        except (OSError, ValueError):
            old_pid = 0
        # A marker left by a process that is still alive is a concurrent run, not a crash.
        self.previous_run_crashed = bool(old_pid) and old_pid != os.getpid() and not _alive(old_pid)
        with contextlib.suppress(OSError):
            self.path.write_text(str(os.getpid()))
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        if exc_type is None or issubclass(exc_type, (KeyboardInterrupt, SystemExit)):
            with contextlib.suppress(OSError):
                self.path.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
