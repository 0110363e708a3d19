"""`tenant-events alerts`: the alerts the rules raised for one tenant, the one that fired last first, as text or
JSON lines (each with its state: firing, acknowledged, snoozed or resolved; "silenced" while a silence holds it,
as the inbox shows it dimmed, with the silence's id in `silenced_by`).

Safe while `stream` or the app is writing. `--since` takes a duration back from now (90m, 2h, 7d) or a date-time;
it keeps the alerts raised or added to since then. `--mark-read` marks the listed alerts read.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import IO, Any

import orjson

from tenant_events.alerts.presentation import alert_json, iso_stamp, title, why_line
from tenant_events.cli.export_cmd import database_for
from tenant_events.cli.options import add_data_dir, add_tenant, number, since_arg
from tenant_events.cli.output_file import cannot_write, refuse_database_target
from tenant_events.paths import AppPaths
from tenant_events.server_text import shown
from tenant_events.settings.silences_file import SilenceBook
from tenant_events.store.alerts_inbox import AlertInbox
from tenant_events.store.health import database_errors
from tenant_events.values.alert_lifecycle import Phase
from tenant_events.values.alerts import StoredAlert
from tenant_events.values.silences import Silence, silencing


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "alerts",
        help="list the alerts the rules raised, newest first",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Exit codes: 0 done · 2 usage or nothing stored · 3 unknown tenant · 5 storage",
    )
    add_data_dir(p)
    add_tenant(p, "which tenant's database (default: the only one)")
    p.add_argument(
        "--since", metavar="WHEN", type=since_arg, help="only alerts active since then (2h, 7d, a date)"
    )
    p.add_argument("--unread", action="store_true", help="only alerts not marked read")
    p.add_argument(
        "--limit",
        metavar="N",
        type=number(1, 10_000_000, integer=True),
        default=1000,
        help="at most N alerts (default 1000)",
    )
    p.add_argument("--jsonl", metavar="PATH|-", help="one JSON object a line instead of text")
    p.add_argument("--mark-read", action="store_true", help="mark the listed alerts read")
    p.set_defaults(run=run)


def text_line(alert: StoredAlert, tenant: str, silence: Silence | None = None) -> str:
    """One alert; `tenant` is the name the user knows the tenant by (its profile and database), the one
    `--tenant` takes, not the service's own name for it that the events carry."""
    why = why_line(alert)
    phase = alert.phase(time.time())
    state = ("" if phase is Phase.FIRING else f", {phase}") + ("" if alert.read else ", unread")
    state += f", silenced ({silence.id})" if silence is not None else ""
    fired = iso_stamp(alert.fired_at or alert.raised_at)  # the list's order: the latest firing first
    line = f"{fired}  {alert.severity:<8}  {title(alert)}: {why}  ({tenant}, alert {alert.id}{state})"  # triage takes the number
    return shown(line, None) + "\n"  # it quotes event fields: the tenant's words (server_text.py)


def json_line(alert: StoredAlert, tenant: str, silence: Silence | None = None) -> str:
    silenced = {"silenced_by": silence.id} if silence is not None else {}
    return orjson.dumps({**alert_json(alert), "tenant": tenant, **silenced}).decode() + "\n"


def run(args: argparse.Namespace) -> int:
    paths = AppPaths.resolve(args.data_dir)
    refuse_database_target(args.jsonl, paths=paths)
    database = database_for(paths, args.tenant)
    tenant = database.stem
    with database_errors(database), AlertInbox(database) as inbox:
        alerts = inbox.alerts(since=args.since, unread_only=args.unread, limit=args.limit)
        out: IO[str] = sys.stdout
        if args.jsonl and args.jsonl != "-":
            try:
                fd = os.open(args.jsonl, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            except OSError as exc:
                raise cannot_write(args.jsonl, exc) from None
            out = os.fdopen(fd, "w", encoding="utf-8")
        silences, now = SilenceBook.of(paths).all(), time.time()
        try:
            for alert in alerts:
                silence = silencing(silences, alert, tenant, now)
                out.write(
                    json_line(alert, tenant, silence) if args.jsonl else text_line(alert, tenant, silence)
                )
        finally:
            if out is not sys.stdout:
                out.close()
        sys.stdout.flush()
        marked = inbox.mark_read([a.id for a in alerts]) if args.mark_read else 0
        unread = inbox.unread_count()
    note = f", {marked} marked read" if args.mark_read else ""
    listed = f"{len(alerts)} alert{'' if len(alerts) == 1 else 's'}"
    print(f"tenant-events: {listed} from {tenant}{note}; {unread} unread", file=sys.stderr)
    return 0
