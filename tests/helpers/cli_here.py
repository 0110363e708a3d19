"""`tenant-events ARGV` run in the test's own process: the real entry point (tenant_events.cli.main), its stdout
and stderr captured, without the third of a second of CPU a fresh interpreter spends importing it. For commands
that end by themselves; a command that needs a process of its own (signals, a full disk behind stdout, another
user) runs as a subprocess instead."""

from __future__ import annotations

import contextlib
import io
import logging
import os
import signal
import subprocess

from tenant_events.cli.main import main


class RanTooLong(Exception):
    """A command that should end at once ran on (e.g. a timeout of -1 that keeps trying forever)."""


def _too_long(signum: int, frame: object) -> None:
    raise RanTooLong("still running after its time limit")


def run_here(
    argv: list[str], env: dict[str, str] | None = None, *, limit: float = 20
) -> subprocess.CompletedProcess[str]:
    """The command's exit code and output, as `subprocess.run(..., capture_output=True, text=True)` gives them;
    stopped after `limit` seconds (SIGALRM). `env` is set for the call only."""
    out, err = io.StringIO(), io.StringIO()
    previous = signal.signal(signal.SIGALRM, _too_long)
    signal.setitimer(signal.ITIMER_REAL, limit)
    saved = {k: os.environ.get(k) for k in (env or {})}
    os.environ.update(env or {})
    root = logging.getLogger()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:  # argparse
                code = int(exc.code or 0)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        for handler in list(
            root.handlers
        ):  # what a command's setup_logging installed points into its data dir
            if getattr(handler, "_tenant_events", False):
                root.removeHandler(handler)
                handler.close()
    return subprocess.CompletedProcess(["tenant-events", *argv], code, out.getvalue(), err.getvalue())
