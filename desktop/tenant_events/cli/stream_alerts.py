"""The alert part of `tenant-events stream`: evaluate the rules as events are stored, report what they raise.

Kept apart from stream_cmd.py, which calls three functions: `add_arguments` (the flags), `prepare` (rules
checked before the stream starts: a bad rule stops it with exit code 3, naming the rule and the field) and
`attach` (once the monitor runs). Each raised alert is one line on stderr and, with `--alerts-jsonl`, one JSON
line (written after the alert is stored: a line is never written twice, `tenant-events alerts` lists them all).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from typing import IO

import orjson

from tenant_events.alerts.evaluator import Evaluator, StepResult
from tenant_events.alerts.from_settings import build_evaluator
from tenant_events.alerts.presentation import alert_json, body, title
from tenant_events.alerts.runner import AlertRunner
from tenant_events.alerts.runner import attach as attach_runner
from tenant_events.monitor import TenantMonitor
from tenant_events.paths import AppPaths
from tenant_events.settings import load_settings


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--alerts-jsonl", metavar="PATH|-",
                   help="also write each alert the rules raise as a JSON line (rule, severity, tenant, count, "
                        "first/last event id and time)")  # fmt: skip
    p.add_argument("--no-alerts", action="store_true", help="store events without evaluating the alert rules")


def prepare(args: argparse.Namespace, paths: AppPaths, name: str) -> Evaluator | None:
    """The evaluator for tenant `name` from the settings file, or None with --no-alerts; BadRules (exit 3)."""
    if args.no_alerts:
        return None
    return build_evaluator(load_settings(paths).alerts, name)


class _AlertSink:
    """Reports raised alerts: a line on stderr, and a JSON line on the --alerts-jsonl target."""

    def __init__(self, target: str | None) -> None:
        self._out: IO[str] | None = None
        if target == "-":
            self._out = sys.stdout
        elif target:
            # Alerts name users and organizations: a new file is the user's alone (0600), like --jsonl.
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            self._out = os.fdopen(fd, "a", encoding="utf-8")

    def __call__(self, result: StepResult) -> None:
        for alert in result.raised:
            why = body(alert).split("\n", 1)[0]
            print(
                f"tenant-events: alert ({alert.severity}): {title(alert)}: {why}", file=sys.stderr, flush=True
            )
            if self._out is not None:
                self._out.write(orjson.dumps(alert_json(alert)).decode() + "\n")
        if self._out is not None and result.raised:
            self._out.flush()

    def close(self) -> None:
        if self._out is not None and self._out is not sys.stdout:
            self._out.close()


def attach(
    args: argparse.Namespace,
    evaluator: Evaluator | None,
    monitor: TenantMonitor,
    stack: contextlib.AsyncExitStack,
) -> AlertRunner | None:
    """Evaluate the rules on `monitor`'s commits; the sink closes with `stack`."""
    if evaluator is None:
        return None
    runner = attach_runner(monitor, evaluator)
    sink = _AlertSink(args.alerts_jsonl)
    stack.callback(sink.close)
    runner.on_alerts.append(sink)
    return runner
