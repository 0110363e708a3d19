"""`tenant-events triage ack|snooze|resolve|reopen|show ID`: one person's triage of a stored alert.

Stored in the tenant's database with who (your login name) and when, and a note; `show` prints the history.
Acknowledged, resolved and snoozed alerts leave the tray badge and are not repeated; a snoozed one comes back when
the snooze ends. A resolve is sent to the destinations that want resolves (a pager's incident closes); the app or
`stream` running for the tenant sends it, and takes the alert's notification away. A team's alert (a tenant read
from a team hub whose relay raises the alerts) is triaged for the team: written to the hub under your hub user,
so the relay sends its resolve and every teammate sees it; when the hub cannot be reached nothing changes.

  tenant-events triage ack 12 --tenant acme --note "looking into it"
  tenant-events triage snooze 12 --for 2h
  tenant-events triage resolve 12 --note "expected: the quarterly clean-up"
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import re
import time
from datetime import datetime
from typing import Any

from tenant_events.cli.options import add_data_dir, alert_id
from tenant_events.cli.stores import tenant_stores
from tenant_events.errors import ConfigError
from tenant_events.paths import AppPaths
from tenant_events.store.alert_triage import AlertTriage
from tenant_events.tenant.team_triage_once import team_of, triage_for_team
from tenant_events.values.triage import SET_WORDS, SNOOZE_MAX_S, clock

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)\s*([mhd])$")
_UNITS = {"m": 60, "h": 3600, "d": 86400}


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "triage",
        help="acknowledge, snooze or resolve a stored alert (with a note)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Exit codes: 0 done · 2 usage · 3 unknown tenant, alert or bad value · 4 the hub refused the sign-in"
        " · 6 the hub cannot be reached (a team's alert)",
    )
    p.add_argument("action", choices=["ack", "snooze", "resolve", "reopen", "show"])
    p.add_argument(
        "alert_id", metavar="ID", type=alert_id, help="the alert's number, as `tenant-events alerts` lists it"
    )
    p.add_argument("--tenant", metavar="NAME", help="the tenant (default: the only one)")
    p.add_argument("--note", default="", help="a few words for the others (at most 500 characters)")
    p.add_argument("--for", dest="duration", metavar="30m|2h|1d", help="snooze: for how long")
    p.add_argument("--until", metavar="TIME", help="snooze: until this ISO 8601 time")
    add_data_dir(p)
    p.set_defaults(run=run)


def snooze_end(duration: str | None, until: str | None, now: float) -> float:
    """When the snooze ends: within a year (a longer one is a resolve); ConfigError naming the option."""
    if duration:
        m = _DURATION.match(duration.strip())
        if not m:
            raise ConfigError("--for", f"{duration!r} is not a duration like 30m, 2h or 1d")
        seconds = float(m.group(1)) * _UNITS[m.group(2)]
        if seconds > SNOOZE_MAX_S:
            raise ConfigError("--for", f"{duration!r} is longer than a year", _LONGER)
        return now + seconds
    if until:
        try:
            end = datetime.fromisoformat(until.replace("Z", "+00:00")).timestamp()
        except (ValueError, OverflowError, OSError):
            raise ConfigError("--until", f"{until!r} is not a time like 2026-11-26T18:00") from None
        if end - now > SNOOZE_MAX_S:
            raise ConfigError("--until", f"{until!r} is more than a year from now", _LONGER)
        return end
    raise ConfigError("snooze", "needs --for or --until")


_LONGER = "to set an alert aside for good, resolve it: tenant-events triage resolve ID"


def run(args: argparse.Namespace) -> int:
    paths = AppPaths.resolve(args.data_dir)
    stores = tenant_stores(paths, args.tenant)
    if len(stores) > 1:
        raise ConfigError(
            "--tenant", f"several tenants are stored ({', '.join(stores)})", "pick one with --tenant"
        )
    [(tenant, path)] = stores.items()
    with AlertTriage(path) as triage:
        if args.action == "show":
            if triage.alert_names(args.alert_id) is None:
                raise ConfigError(f"alert {args.alert_id}", f"no alert {args.alert_id} in {tenant}")
            history = triage.history(args.alert_id)
            if not history:
                print(f"{tenant} alert {args.alert_id}: nobody has triaged it yet")
            for t in history:
                print(_line(t.state, t.by, t.at, t.until, t.note))
            return 0
        state = {"ack": "acknowledged", "snooze": "snoozed", "resolve": "resolved", "reopen": "open"}[
            args.action
        ]
        now = time.time()
        until = snooze_end(args.duration, args.until, now) if state == "snoozed" else None
        hub = team_of(paths, tenant, path, args.alert_id)
        if hub is None:
            try:
                entry = triage.set(args.alert_id, state, getpass.getuser(), args.note, until, now)  # type: ignore[arg-type]
            except ValueError as exc:
                raise ConfigError(f"alert {args.alert_id}", str(exc)) from None
    if hub is not None:  # the team's alert: the team hears of it, under this hub user's name
        change = (args.alert_id, state, args.note, until)
        try:
            entry = asyncio.run(triage_for_team(paths, hub, path, change))  # type: ignore[arg-type]
        except ValueError as exc:
            raise ConfigError(f"alert {args.alert_id}", str(exc)) from None
    print(
        f"{tenant} alert {args.alert_id}: {_line(entry.state, entry.by, entry.at, entry.until, entry.note)}"
    )
    return 0


def _line(state: str, by: str, at: float, until: float | None, note: str) -> str:
    """ "acknowledged by ana 14:02 — looking into it" (a snooze says until when)."""
    text = f"{SET_WORDS.get(state, state)} by {by} {clock(at, '%Y-%m-%d %H:%M')}"
    if until is not None:
        text += f" until {clock(until, '%Y-%m-%d %H:%M')}"
    clean = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in note)
    return f"{text} — {clean}" if note else text
