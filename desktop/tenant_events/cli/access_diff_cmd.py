"""`tenant-events access diff --from WHEN [--to WHEN]`: what changed in one tenant's access after one moment up to
another (default: now) — granted, removed, joined, left, connection added or removed — each with the event that
did it and who did it (the client and IP address the event names). Net: a grant held at both moments is not a
change, even if it was removed and given again in between. Options as `tenant-events access`.
"""

from __future__ import annotations

import argparse
from typing import Any

from tenant_events.cli.access_common import add_parser, answer
from tenant_events.cli.options import since_arg
from tenant_events.errors import UserFixableError


def register(actions: Any) -> None:
    p = add_parser(actions, "diff", "what changed between two moments", __doc__, argparse.SUPPRESS)
    p.add_argument(
        "--from", dest="since", metavar="WHEN", type=since_arg, required=True, help="the earlier moment"
    )
    p.add_argument(
        "--to", dest="until", metavar="WHEN", type=since_arg, help="the later moment (default: now)"
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    low = int(args.since * 1000)
    high = None if args.until is None else int(args.until * 1000)
    if high is not None and high <= low:
        raise UserFixableError("--to must be later than --from", "swap them, or leave --to out for now")
    return answer(args, lambda review: review.diff(low, high))
