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
