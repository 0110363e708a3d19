"""`tenant-events destinations list|add|remove|test`: where alerts are sent (any Apprise URL).

The URL is read from stdin (a prompt that does not echo on a terminal), never from the command line: it holds
tokens. It is kept in the system keyring; the settings file and this command's output show it masked.

  printf '%s\\n' 'json://hooks.example/alerts' | tenant-events destinations add ops --severity critical
  tenant-events destinations test ops
"""

from __future__ import annotations

import argparse
import getpass
import sys
from datetime import datetime
from typing import Any

from tenant_events.cli.options import add_data_dir, number
from tenant_events.destinations.registry import (
    find_destination,
    make_destination,
    remove_destination,
    save_destination,
    send_test_alert,
)
from tenant_events.errors import ConfigError, NetworkError
from tenant_events.paths import AppPaths
from tenant_events.settings import load_settings
from tenant_events.settings.destinations import SEVERITIES


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "destinations",
        help="where alerts are sent: chat, pager, e-mail, webhooks",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Exit codes: 0 done · 2 usage · 3 bad name or URL · 6 the test alert was not delivered",
    )
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    ls = sub.add_parser("list", help="the destinations, what they receive and whether they are stopped")
    add_data_dir(ls)
    ls.set_defaults(run=run_list)
    add = sub.add_parser("add", help="add a destination or change one (the URL is read from stdin)")
    add.add_argument("name", metavar="NAME")
    add.add_argument(
        "--severity",
        action="append",
        choices=SEVERITIES,
        default=[],
        help="severities it receives (repeatable; default warning and critical)",
    )
    add.add_argument("--rule", action="append", default=[], metavar="ID", help="only this rule (repeatable)")
    add.add_argument(
        "--tenant", action="append", default=[], metavar="NAME", help="only this tenant (repeatable)"
    )
    add.add_argument(
        "--ignore-quiet",
        action="store_true",
        help="deliver during quiet hours and do-not-disturb too (a pager for critical alerts)",
    )
    add.add_argument(
        "--send-resolved",
        choices=["yes", "no"],
        help="say when an alert is resolved (default: yes for pagers and webhooks, no for e-mail and chat)",
    )
    add.add_argument(
        "--repeat-minutes",
        metavar="N",
        type=number(0, 10_080),
        default=60.0,
        help="send an unacknowledged critical alert again every N minutes (default 60; 0 never)",
    )
    add.add_argument("--keep-url", action="store_true", help="change only what it receives; keep its URL")
    add_data_dir(add)
    add.set_defaults(run=run_add)
    rm = sub.add_parser("remove", help="remove a destination and its URL from the keyring")
    rm.add_argument("name", metavar="NAME")
    add_data_dir(rm)
    rm.set_defaults(run=run_remove)
    test = sub.add_parser("test", help="send a test alert now and say what happened")
    test.add_argument("name", metavar="NAME")
    add_data_dir(test)
    test.set_defaults(run=run_test)


def _store() -> Any:
    from tenant_events.tenant.sign_in import open_secret_store

    return open_secret_store().store


def _read_url() -> str:
    if sys.stdin.isatty():
        return getpass.getpass("Apprise URL (not shown): ")
    return sys.stdin.readline().strip()


def run_add(args: argparse.Namespace) -> int:
    paths = AppPaths.resolve(args.data_dir).ensure()
    fields: dict[str, Any] = {
        "rules": args.rule,
        "tenants": args.tenant,
        "held_by_quiet": not args.ignore_quiet,
        "repeat_minutes": args.repeat_minutes,
    }
    if args.send_resolved is not None:
        fields["send_resolved"] = args.send_resolved == "yes"
    if args.severity:
        fields["severities"] = args.severity
    store = _store()
    if args.keep_url:
        old = find_destination(paths, args.name)
        from tenant_events.destinations.registry import destination_url

        url = destination_url(store, paths, old)
        profile = make_destination(args.name, url, **fields)
        save_destination(paths, store, profile, None)
    else:
        url = _read_url()
        if not url:
            raise ConfigError("destination url", "is empty", "give the Apprise URL on stdin")
        profile = make_destination(args.name, url, **fields)
        save_destination(paths, store, profile, url)
    print(f"destination {profile.name}: {profile.url_masked} ({', '.join(profile.severities)})")
    return 0


def run_remove(args: argparse.Namespace) -> int:
    paths = AppPaths.resolve(args.data_dir)
    remove_destination(paths, _store(), args.name)
    print(f"destination {args.name} removed")
    return 0


def run_test(args: argparse.Namespace) -> int:
    paths = AppPaths.resolve(args.data_dir)
    profile = find_destination(paths, args.name)
    outcome = send_test_alert(_store(), paths, profile)
    if outcome.kind == "delivered":
        print(f"destination {profile.name}: test alert delivered")
        return 0
    raise NetworkError(
        f"destination {profile.name}: test alert not delivered: {outcome.reason}",
        "fix the URL: tenant-events destinations add NAME" if outcome.kind == "stop" else "",
    )


def run_list(args: argparse.Namespace) -> int:
    from tenant_events.tenant.deliveries import destination_status

    paths = AppPaths.resolve(args.data_dir)
    destinations = load_settings(paths).destinations
    if not destinations:
        print("no alert destinations (add one: tenant-events destinations add NAME)")
        return 0
    status = destination_status(paths)
    for d in destinations:
        what = ", ".join(d.severities)
        if d.rules:
            what += f"; rules {', '.join(d.rules)}"
        if d.tenants:
            what += f"; tenants {', '.join(d.tenants)}"
        what += "; waits out quiet hours" if d.held_by_quiet else "; ignores quiet hours"
        what += "; resolves" if d.sends_resolved else "; no resolves"
        what += f"; repeats every {d.repeat_minutes:g} min" if d.repeat_minutes else "; no repeats"
        print(f"{d.name}\t{d.url_masked}\t{what}")
        for tenant, s in status.get(d.name, []):
            state = []
            if s.stopped_reason and s.fingerprint == d.fingerprint:
                when = datetime.fromtimestamp(s.stopped_at or 0).strftime("%Y-%m-%d %H:%M")
                state.append(f"STOPPED since {when}: {_printable(s.stopped_reason)}")
            if s.pending:
                state.append(f"{s.pending} pending")
            if s.undelivered:
                state.append(f"{s.undelivered} undelivered")
            if s.last_error and not s.stopped_reason and s.pending:
                state.append(f"last error: {_printable(s.last_error)}")
            if state:
                print(f"  {tenant}: {'; '.join(state)}")
    return 0


def _printable(text: str) -> str:
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text)
