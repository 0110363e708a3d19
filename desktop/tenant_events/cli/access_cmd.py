"""`tenant-events access`: who held which access in one tenant at a moment (`--at`, default now); `access diff`:
what changed between two moments.

Per organization its members, their roles, its groups' roles and its connections; per group its members and
roles; per user every membership and role, with the roles held through a group named as such. WHEN is a
date-time (UTC unless it says otherwise, e.g. 2026-10-01T00:00:00Z) or a duration back from now (90m, 2h, 90d).
Every answer says how complete it is: the history is complete from the first stored event, and possible gaps in
the range are named; a moment before the first stored event cannot be known and is refused.

Stored events the access history has not taken in yet (the app or `stream` indexes them while idle) are taken in
first; safe while the app or `stream` writes to the same file. Filters name an entity by id or by name, in any
case; `--role admin-like` keeps every admin-like role (admin, owner, superuser).
"""

from __future__ import annotations

import argparse
from typing import Any

from tenant_events.cli import access_diff_cmd
from tenant_events.cli.access_common import add_parser, answer
from tenant_events.cli.options import since_arg


def register(subparsers: Any) -> None:
    help_text = "who held which access at a moment, or what changed between two (access diff)"
    p = add_parser(subparsers, "access", help_text, __doc__)
    p.add_argument("--at", metavar="WHEN", type=since_arg, help="the moment (default: now)")
    p.set_defaults(run=run)
    actions = p.add_subparsers(dest="access_action", metavar="ACTION", title="actions")
    access_diff_cmd.register(actions)


def run(args: argparse.Namespace) -> int:
    at_ms = None if args.at is None else int(args.at * 1000)
    return answer(args, lambda review: review.at(at_ms))
