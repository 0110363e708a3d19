"""What `tenant-events access` and `access diff` share: their options, and asking the tenant's history and
writing the answer (text, CSV or JSON lines, with how complete it is)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tenant_events.access.filters import ADMIN_LIKE, AccessFilter
from tenant_events.access.records import Diff, Snapshot
from tenant_events.access.review import AccessReview
from tenant_events.access.rows import write_csv, write_jsonl
from tenant_events.access.source import open_history
from tenant_events.access.words import completeness_lines, first_known, unknown_reason
from tenant_events.cli import access_text
from tenant_events.cli.export_cmd import database_for
from tenant_events.cli.options import profile_name
from tenant_events.cli.output_file import refuse_database_target, write_output
from tenant_events.errors import UserFixableError
from tenant_events.paths import AppPaths
from tenant_events.server_text import shown
from tenant_events.store.health import database_errors

EPILOG = "Exit codes: 0 done · 2 usage, nothing stored, or a moment the history does not reach · 3 unknown tenant · 5 storage"


def add_parser(
    parent: Any, name: str, help_text: str, doc: str | None, default: Any = None
) -> argparse.ArgumentParser:
    """A parser of `access` or `access diff`, with the options both take."""
    p: argparse.ArgumentParser = parent.add_parser(
        name,
        help=help_text,
        description=doc,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EPILOG,
    )
    add_common(p, default)
    return p


def add_common(p: argparse.ArgumentParser, default: Any = None) -> None:
    """The options `access` and `access diff` share. Under `diff` their default is argparse.SUPPRESS, so one
    given before the action (`access --tenant acme diff …`) keeps its value."""
    p.add_argument(
        "--data-dir",
        metavar="DIR",
        default=default,
        help="settings, profiles, event databases and logs (default: $TENANT_EVENTS_HOME or the per-user dirs)",
    )
    p.add_argument(
        "--tenant",
        metavar="NAME",
        default=default,
        type=profile_name,
        help="which tenant (default: the only one)",
    )
    p.add_argument("--role", metavar="ROLE", default=default, help=f"one role (id or name), or {ADMIN_LIKE}")
    p.add_argument("--org", metavar="NAME", default=default, help="one organization (id or name)")
    p.add_argument("--group", metavar="NAME", default=default, help="one group (id or name)")
    p.add_argument("--user", metavar="NAME", default=default, help="one user (id, email or name)")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--csv", metavar="PATH|-", default=default, help="one row a grant (or change), as CSV")
    fmt.add_argument(
        "--jsonl", metavar="PATH|-", default=default, help="one JSON object a grant (or change) a line"
    )


def filter_of(args: argparse.Namespace) -> AccessFilter:
    return AccessFilter(args.role, args.org, args.group, args.user)


def answer(args: argparse.Namespace, ask: Callable[[AccessReview], Snapshot | Diff]) -> int:
    """Open the tenant's history, ask it, narrow the answer to the filters and write it."""
    paths = AppPaths.resolve(args.data_dir)
    refuse_database_target(args.csv, args.jsonl, paths=paths)
    database = database_for(paths, args.tenant)
    with database_errors(database), open_history(database, catch_up=_writable(database)) as history:
        result: Snapshot | Diff = ask(AccessReview(database.stem, history))
    if not result.known:
        first = first_known(result.completeness)
        raise UserFixableError(
            unknown_reason(result),
            f"ask about a moment from {first} on" if first is not None else "run tenant-events stream first",
        )
    flt = filter_of(args)
    grants = result.grants if isinstance(result, Snapshot) else tuple(c.grant for c in result.changes)
    unmatched = flt.unmatched(grants)
    narrowed = flt.snapshot(result) if isinstance(result, Snapshot) else flt.diff(result)
    target = args.csv or args.jsonl
    writer = write_csv if args.csv else write_jsonl if args.jsonl else access_text.write
    written = write_output(target or "-", lambda out: writer(narrowed, out))
    if written is None:  # the reader of stdout stopped early
        return 0
    err = sys.stderr
    if target:  # the text has these lines at its head
        err.writelines(shown(line, None) + "\n" for line in completeness_lines(narrowed.completeness))
    err.writelines(f"tenant-events: {line} at that moment\n" for line in unmatched)
    what = "grant" if isinstance(narrowed, Snapshot) else "change"
    print(f"tenant-events: {written:,} {what}{'' if written == 1 else 's'} in {database.stem}", file=err)
    return 0


def _writable(database: Path) -> bool:
    """Whether the history may be brought up to date in the file (a read-only copy is read as it is)."""
    return os.access(database, os.W_OK) and os.access(database.parent, os.W_OK)
