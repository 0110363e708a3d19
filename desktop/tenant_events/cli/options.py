"""Options several subcommands share, defined once so their names and help cannot drift apart."""

from __future__ import annotations

import argparse


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
