"""`tenant-events silences list|add|remove`: hold alerts back for a while, as Alertmanager's silences do.

A silenced alert is still stored and listed (the inbox shows it dimmed), but nothing is notified or delivered
for it while the silence lasts. Matchers left out match every alert; `--group` matches a grouped rule's group
by its key (a client id) or by its name ("client HR Import"). The app, `stream` and a relay on this machine
honour a silence within a second. A silence with `--tenant` naming a tenant followed through a team hub is the
team's: it is written to the hub first (as your hub user), and every teammate's app and the team's relay honour
it; `remove` of a team silence (its id starts with "hub-") lifts it for the whole team.

  tenant-events silences add --rule org-connection --for 1h --comment "onboarding Acme"
  tenant-events silences add --rule mass-deletion-by-actor --group "client HR Import" --for 24h
  tenant-events silences list            (active ones; --all: ended ones too)
  tenant-events silences remove 3f9a02bc
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import sys
import time
from typing import Any

from tenant_events.alerts.from_settings import rule_set
from tenant_events.cli.options import add_data_dir
from tenant_events.cli.triage_cmd import snooze_end
from tenant_events.errors import ConfigError
from tenant_events.paths import AppPaths
from tenant_events.server_text import shown
from tenant_events.settings import load_settings
from tenant_events.settings.silences_file import SEVERITIES, new_silence
from tenant_events.tenant.silences import Silences


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "silences",
        help="silence alerts for a while: list, add or remove silences",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Exit codes: 0 done · 2 usage · 3 bad value or unknown silence · 4 the hub refused (a team tenant) · "
        "6 the hub cannot be reached",
    )
    p.add_argument("action", choices=["list", "add", "remove"])
    p.add_argument("silence_id", metavar="ID", nargs="?", help="remove: the silence's id (from list)")
    p.add_argument("--rule", metavar="RULE", help="add: alerts of this rule (its id)")
    p.add_argument("--severity", choices=SEVERITIES, help="add: alerts of this severity")
    p.add_argument("--tenant", metavar="NAME", help="add: alerts of this tenant (profile name or tenant id)")
    p.add_argument("--group", metavar="VALUE", help="add: alerts of this group (its key or its name)")
    p.add_argument("--for", dest="duration", metavar="30m|2h|1d", help="add: for how long")
    p.add_argument("--until", metavar="TIME", help="add: until this ISO 8601 time")
    p.add_argument("--comment", default="", help="add: why (at most 500 characters)")
    p.add_argument("--all", action="store_true", help="list: ended silences too")
    add_data_dir(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    paths = AppPaths.resolve(args.data_dir)
    silences = Silences(paths)
    book = silences.book
    now = time.time()
    if args.action == "list":
        listed = [s for s in book.all() if args.all or s.ends_at > now]
        for s in sorted(listed, key=lambda s: s.ends_at):
            print(shown(f"{s.id}  {s.text(now)}", None))
        if not listed:
            print("tenant-events: no silences" + ("" if args.all else " active"), file=sys.stderr)
        return 0
    if args.action == "remove":
        if not args.silence_id:
            raise ConfigError("silences remove", "needs the silence's ID (tenant-events silences list)")
        lifted = asyncio.run(silences.lift(args.silence_id))
        print(shown(f"lifted {lifted.id}: {lifted.matchers_text()}", None))
        return 0
    if args.silence_id:
        raise ConfigError("silences add", f"takes no ID ({args.silence_id!r}): a new silence gets one")
    if args.rule is not None and rule_set(load_settings(paths).alerts).get(args.rule) is None:
        raise ConfigError("--rule", f"no alert rule {args.rule!r}", "tenant-events rules lists them")
    ends = snooze_end(args.duration, args.until, now)
    silence = new_silence(
        duration_s=ends - now,
        author=getpass.getuser(),
        comment=args.comment,
        rule=args.rule,
        severity=args.severity,
        tenant=args.tenant,
        group=args.group,
        now=now,
    )
    silence = asyncio.run(silences.add(silence))
    print(shown(f"{silence.id}  {silence.text(now)}", None))
    return 0
