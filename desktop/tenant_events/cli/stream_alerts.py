"""The alert part of `tenant-events stream`: which rules run, and how what they raise is reported.

Kept apart from stream_cmd.py, which calls: `add_arguments` (the flags), `rules` (the settings' rules for the
tenant link, which checks them before the stream starts: a bad rule stops it with exit code 3, naming the rule
and the field), `report` (an observer on the link's `on_alerts`) and `follow` (rules saved to the settings file
while the stream runs). Each raised alert, and each new version of one (a firing folded into it) that the desktop
says again too (always for a critical alert, for a warning unless its rule's `renotify` is off, never for an info
alert), is one line on stderr — a catch-up's alerts, one per rule and group, one line for each evaluation step —
and, with `--alerts-jsonl`, each raised alert is one JSON line (written after the alert is stored: a line is never
written twice, `tenant-events alerts` lists them all).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable
from typing import IO, TYPE_CHECKING

import orjson

from tenant_events.alert_settings import AlertSettings
from tenant_events.alerts.evaluator import StepResult
from tenant_events.alerts.presentation import alert_json, catch_up_tally, title, why_line
from tenant_events.cli.output_file import cannot_write
from tenant_events.paths import AppPaths
from tenant_events.server_text import shown
from tenant_events.settings import load_settings
from tenant_events.settings.shared_file import Stamp
from tenant_events.tenant.link import TenantLink
from tenant_events.tenant.rules_follow import follow_rules
from tenant_events.values.alert_lifecycle import renotifies

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


def follow(
    link: TenantLink,
    paths: AppPaths,
    alerts: AlertSettings | None,
    seen: Stamp,
    stack: contextlib.AsyncExitStack,
) -> None:
    """Rules saved to the settings file while the stream runs (`rules import`, the app's rules editor, a hand
    edit) run from the next evaluation on, with a line on stderr (tenant/rules_follow.py); `alerts`: the rules it
    started with (None: --no-alerts), read after `seen` was taken."""
    if alerts is not None and link.rules is not None:
        stack.push_async_callback(follow_rules(link, paths, alerts, seen, say))


def say(text: str) -> None:
    """One line on stderr, control characters escaped."""
    print(f"tenant-events: {shown(text, None)}", file=sys.stderr, flush=True)


class _AlertSink:
    """Reports raised alerts: a line on stderr, and a JSON line on the --alerts-jsonl target."""

    def __init__(self, target: str | None, tenant: str, renotify: Callable[[str], bool]) -> None:
        self._tenant = tenant  # the link's name (its profile and database), as `alerts` names it too
        self._renotify = renotify  # a rule's choice to say its warnings again (the desktop's, as well)
        self._out: IO[str] | None = None
        if target == "-":
            self._out = sys.stdout
        elif target:
            # Alerts name users and organizations: a new file is the user's alone (0600), like --jsonl.
            try:
                fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            except OSError as exc:
                raise cannot_write(target, exc) from None
            self._out = os.fdopen(fd, "a", encoding="utf-8")

    def __call__(self, result: StepResult) -> None:
        caught_up = [a for a in result.raised if a.catch_up]
        said = [a for a in result.raised if not a.catch_up]
        said += [  # a new version, when the desktop would say it again too: an info alert's 300th is not news
            a
            for a in result.updated
            if a.id in result.refired and not a.catch_up and renotifies(a.severity, self._renotify(a.rule_id))
        ]
        for alert in said:
            why = why_line(alert)
            line = shown(f"alert ({alert.severity}): {title(alert)}: {why}", None)  # it quotes the tenant
            print(f"tenant-events: {line}", file=sys.stderr, flush=True)
        if caught_up:  # a grouped rule raises one per group all through a backlog: one line for the step
            line = shown(f"while you were away: {catch_up_tally(caught_up)}", None)
            print(f"tenant-events: {line}", file=sys.stderr, flush=True)
        if self._out is not None and result.raised:
            for alert in result.raised:
                record = {**alert_json(alert), "tenant": self._tenant}
                self._out.write(orjson.dumps(record).decode() + "\n")
            self._out.flush()

    def close(self) -> None:
        if self._out is not None and self._out is not sys.stdout:
            self._out.close()


def report(args: argparse.Namespace, link: TenantLink, stack: contextlib.AsyncExitStack) -> None:
    """Report the alerts `link`'s rules raise (none run with --no-alerts); the output closes with `stack`."""
    if link.rules is None:
        return

    def renotify(rule_id: str) -> bool:  # the rules in effect now: a saved edit replaces them
        return link.rules.renotify(rule_id) if link.rules is not None else True

    sink = _AlertSink(args.alerts_jsonl, link.name, renotify)
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
