"""`--keep-live` and `--keep-archive` of the commands that store events (`stream`, `relay`): how long events stay
in each tier (docs/archive.md); without them, the settings file's choice, as the app applies it."""

from __future__ import annotations

import argparse
import contextlib
import re
from dataclasses import replace
from typing import Any, Final

from tenant_events.errors import UserFixableError
from tenant_events.paths import AppPaths
from tenant_events.values.retention import Retention

_DURATION: Final = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([dh]?)\s*$", re.IGNORECASE)
_MAX_DAYS: Final = 36500.0


def days(text: str) -> float:
    """An argparse `type=`: `30d`, `36h` or a number of days, from one hour to a hundred years."""
    match = _DURATION.match(text)
    if match is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration like 30d or 12h")
    value = float(match.group(1)) / (24 if match.group(2).lower() == "h" else 1)
    if not 1 / 24 <= value <= _MAX_DAYS:
        raise argparse.ArgumentTypeError(f"{text!r} is not between 1h and {_MAX_DAYS:g}d")
    return value


def add_tier_args(parser: argparse.ArgumentParser | Any) -> None:
    parser.add_argument(
        "--keep-live",
        metavar="DAYS",
        type=days,
        help="events this recent stay in the live database, older ones move to the archive (e.g. 30d)",
    )
    parser.add_argument(
        "--keep-archive",
        metavar="DAYS",
        type=days,
        help="archived events older than this are deleted, from a relay's team archive too (e.g. 400d; "
        "default: the settings, 400d)",
    )


def tiers(args: argparse.Namespace, paths: AppPaths) -> Retention:
    """The settings file's tiers, with the command line's choices over them."""
    from tenant_events.settings import load_settings

    retention = Retention()
    with contextlib.suppress(UserFixableError):  # a damaged file is reported where it is read for the rules
        retention = load_settings(paths).retention.tiers()
    if args.keep_live is not None:
        retention = replace(retention, keep_live_days=args.keep_live)
    if args.keep_archive is not None:
        retention = replace(retention, keep_archive_days=args.keep_archive)
    return retention
