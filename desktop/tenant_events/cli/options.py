"""Options several subcommands share, defined once so their names and help cannot drift apart."""

from __future__ import annotations

import argparse
import math
import re
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, NoReturn

from tenant_events.paths import check_profile_name


def add_data_dir(parser: argparse.ArgumentParser) -> None:
    """`--data-dir`: where the app keeps settings, sign-in profiles, event databases and logs (paths.py)."""
    parser.add_argument(
        "--data-dir",
        metavar="DIR",
        help="settings, profiles, event databases and logs (default: $TENANT_EVENTS_HOME or the per-user dirs)",
    )


# Options whose value is a query in the window's syntax, under any subcommand. A query may start with `-` (a
# negation: `-type:user.updated`), which argparse would take for an option and then say the query is missing.
QUERY_OPTIONS = ("--query",)


def queries_as_typed(argv: list[str]) -> list[str]:
    """`--query -type:x` as `--query=-type:x`, so a query that starts with `-` reaches its option as typed."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            return out + argv[i:]
        following = argv[i + 1] if i + 1 < len(argv) else ""
        if arg in QUERY_OPTIONS and following.startswith("-") and not following.startswith("--"):
            out.append(f"{arg}={following}")
            i += 2
            continue
        out.append(arg)
        i += 1
    return out


def number(low: float, high: float, *, above: bool = False, integer: bool = False) -> Callable[[str], float]:
    """An argparse `type=`: a finite number from `low` (or just above it) to `high`, else one usage line.

    nan, inf and out-of-range values are refused here, before any work: "nan s" timeouts, "-1 keeps trying"
    and "0 s between reconnects" cannot reach the engine."""
    kind = "a whole number" if integer else "a number"
    where = f"above {low:g}" if above else f"from {low:g}"

    def parse(text: str) -> float:
        try:
            value = float(int(text)) if integer else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {kind}") from None
        if not math.isfinite(value) or value > high or value < low or (above and value == low):
            raise argparse.ArgumentTypeError(f"{text!r} is not {kind} {where} to {high:g}")
        return int(value) if integer else value

    parse.__name__ = "number"  # argparse names the type in its "invalid <type> value" fallback
    return parse


ROW_ID_MAX = 2**63 - 1  # SQLite's largest integer


def alert_id(text: str) -> int:
    """An argparse `type=`: an alert's ID as `tenant-events alerts` prints it (1 to SQLite's largest integer)."""
    digits = text.strip()
    if not (digits.isascii() and digits.isdigit()) or len(digits) > 19 or not 1 <= int(digits) <= ROW_ID_MAX:
        raise argparse.ArgumentTypeError(
            f"{text[:40]!r} is not an alert ID (a whole number, as `alerts` lists them)"
        )
    return int(digits)


_DURATION = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhd])$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_EPOCH, _LAST = 0.0, datetime(2100, 1, 1, tzinfo=UTC).timestamp()


def since_arg(value: str) -> float:
    """WHEN of `alerts --since` and `access --at`: `now`, a duration back from now (`90m`, `2h`, `7d`) or an ISO
    8601 date-time (UTC unless it says otherwise; also as the commands print times, `2026-11-01 12:00:05 UTC`) →
    unix seconds."""
    text = value.strip()
    if text.lower() == "now":
        return time.time()
    if text.endswith(" UTC"):
        text = text.removesuffix(" UTC").rstrip() + "+00:00"
    if m := _DURATION.match(text):
        seconds = time.time() - float(m.group(1)) * _UNIT_SECONDS[m.group(2)]
    else:
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{value!r} is neither now, a duration like 2h or 7d nor a date-time like 2026-11-22T08:00:00Z"
            ) from None
        seconds = (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()
    if not _EPOCH <= seconds < _LAST:  # events carry times in this range; far beyond, stamps would overflow
        raise argparse.ArgumentTypeError(f"{value!r} is not a moment between 1970 and 2100")
    return seconds


def finite(text: str) -> float:
    """A float that is not nan or inf (its range is checked by whoever uses it)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def profile_name(text: str) -> str:
    """`--tenant` and `--name`: a profile name is also its database's file name, so it must be a slug."""
    try:
        return check_profile_name(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_tenant(parser: argparse.ArgumentParser | Any, help_text: str) -> None:
    """`--tenant NAME` of the read commands."""
    parser.add_argument("--tenant", metavar="NAME", type=profile_name, help=help_text)


class OneLineParser(argparse.ArgumentParser):
    """A usage error is one line naming the option and what is wrong, and where the full usage is."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")
