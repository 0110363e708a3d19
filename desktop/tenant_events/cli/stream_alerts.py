"""The alert part of `tenant-events stream`: which rules run, and how what they raise is reported.

Kept apart from stream_cmd.py, which calls: `add_arguments` (the flags), `rules` (the settings' rules for the
tenant link, which checks them before the stream starts: a bad rule stops it with exit code 3, naming the rule
and the field), `report` (an observer on the link's `on_alerts`) and `follow` (rules saved to the settings file
while the stream runs). Each raised alert is one line on stderr and, with `--alerts-jsonl`, one JSON line
(written after the alert is stored: a line is never written twice, `tenant-events alerts` lists them all).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
from typing import IO, TYPE_CHECKING, Final

import orjson

from tenant_events.alert_settings import AlertSettings
from tenant_events.alerts.evaluator import StepResult
from tenant_events.alerts.from_settings import BadRules, rule_set
from tenant_events.alerts.presentation import alert_json, title, why_line
from tenant_events.paths import AppPaths
from tenant_events.server_text import shown
from tenant_events.settings import file_stamp, load_settings, read_current
from tenant_events.settings.settings_file import Unusable
from tenant_events.tenant.link import TenantLink

if TYPE_CHECKING:
    from tenant_events.tenant.team_feed import TeamAlertView


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--alerts-jsonl",
        metavar="PATH|-",
        help="also write each alert the rules raise as a JSON line (rule, severity, tenant, count, "
        "first/last event id and time)",
    )
    p.add_argument("--no-alerts", action="store_true", help="store events without evaluating the alert rules")


def rules(args: argparse.Namespace, paths: AppPaths) -> AlertSettings | None:
    """The settings file's alert rules, or None with --no-alerts."""
    if args.no_alerts:
        return None
    return load_settings(paths).alerts


FOLLOW_EVERY_S: Final = 1.0  # how often the settings file is looked at (one stat)


def follow(
    link: TenantLink, paths: AppPaths, alerts: AlertSettings | None, stack: contextlib.AsyncExitStack
) -> None:
    """Rules saved to the settings file while the stream runs (`rules import`, the app's rules editor, a hand
    edit) run from the next evaluation on, and a line on stderr says so; `alerts`: the rules it started with
    (None: --no-alerts). Rules that are not valid, or a file that cannot be read, leave the rules before running,
    with a line saying why. The file is only read here."""
    if alerts is None or link.rules is None:
        return
    task = asyncio.create_task(_follow(link, paths, alerts), name="follow-rules")

    async def stop() -> None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    stack.push_async_callback(stop)


async def _follow(link: TenantLink, paths: AppPaths, running: AlertSettings) -> None:
    seen = file_stamp(paths.settings_file)
    while True:
        await asyncio.sleep(FOLLOW_EVERY_S)
        stamp = file_stamp(paths.settings_file)
        if stamp == seen:
            continue
        seen = stamp
        try:
            found = await asyncio.to_thread(read_current, paths)
            alerts = found.alerts if found is not None else AlertSettings()
            if alerts == running:
                continue  # another part of the settings changed
            link.set_alert_rules(alerts)
        except (Unusable, BadRules) as exc:
            kept = "the rules before keep running"
            say(f"the alert rules saved to the settings file were not taken in ({kept}): {exc}")
            continue
        running = alerts
        enabled = sum(1 for rule in rule_set(alerts).rules if rule.enabled)
        where = " (while the hub's relay evaluates for the team, its rules are the ones that run)"
        say(
            f"the alert rules changed in the settings file: {enabled} rules run from now on"
            + (where if link.team_alerts else "")
        )


def say(text: str) -> None:
    print(f"tenant-events: {shown(text, None)}", file=sys.stderr, flush=True)


class _AlertSink:
    """Reports raised alerts: a line on stderr, and a JSON line on the --alerts-jsonl target."""

    def __init__(self, target: str | None, tenant: str) -> None:
        self._tenant = tenant  # the link's name (its profile and database), as `alerts` names it too
        self._out: IO[str] | None = None
        if target == "-":
            self._out = sys.stdout
        elif target:
            # Alerts name users and organizations: a new file is the user's alone (0600), like --jsonl.
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            self._out = os.fdopen(fd, "a", encoding="utf-8")

    def __call__(self, result: StepResult) -> None:
        for alert in result.raised:
            why = why_line(alert)
            line = shown(f"alert ({alert.severity}): {title(alert)}: {why}", None)  # it quotes the tenant
            print(f"tenant-events: {line}", file=sys.stderr, flush=True)
            if self._out is not None:
                record = {**alert_json(alert), "tenant": self._tenant}
                self._out.write(orjson.dumps(record).decode() + "\n")
        if self._out is not None and result.raised:
            self._out.flush()

    def close(self) -> None:
        if self._out is not None and self._out is not sys.stdout:
            self._out.close()


def report(args: argparse.Namespace, link: TenantLink, stack: contextlib.AsyncExitStack) -> None:
    """Report the alerts `link`'s rules raise (none run with --no-alerts); the output closes with `stack`."""
    if link.rules is None:
        return
    sink = _AlertSink(args.alerts_jsonl, link.name)
    stack.callback(sink.close)
    link.on_alerts.append(sink)


async def team_view(link: TenantLink) -> TeamAlertView | None:
    """The team's alerts instead of this viewer's own evaluation, when the hub's relay evaluates for the team."""
    from tenant_events.tenant.team_feed import open_team_view  # loads the NATS client

    return await open_team_view(link)


TEAM_LINE = "tenant-events: showing the team's alerts (the hub's relay evaluates the rules)"


def watch_team(link: TenantLink, stack: contextlib.AsyncExitStack) -> None:
    """Switch to the team's alerts once a relay starts evaluating for the team (it did not when the stream
    started); the line on stderr says when."""
    from tenant_events.tenant.team_feed import TeamAlertWatch  # loads the NATS client

    if link.rules is None:
        return
    watch = TeamAlertWatch(link, lambda _: print(TEAM_LINE, file=sys.stderr, flush=True))
    watch.start()
    stack.push_async_callback(watch.stop)
