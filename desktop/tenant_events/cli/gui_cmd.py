"""`tenant-events [gui] [--demo] [--data-dir D] [--minimized]`: the desktop app (the default command).

Qt is imported only when this command runs, so the CLI and `--version` stay Qt-free.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Any

from tenant_events.cli.options import add_data_dir
from tenant_events.errors import UserFixableError
from tenant_events.logs import setup_logging
from tenant_events.malloc_arenas import limit_malloc_arenas
from tenant_events.paths import AppPaths
from tenant_events.url_forms import parse_alert_link


def register(subparsers: Any) -> None:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "gui", help="start the desktop tray app (the default)", description="Start the desktop tray app."
    )
    p.add_argument("--demo", action="store_true", help="start on the bundled demo tenant (a local simulator)")
    add_data_dir(p)
    p.add_argument(
        "--minimized", action="store_true", help="start hidden in the tray (used by start at login)"
    )
    p.add_argument("--verbose", "-v", action="store_true", help="debug logging")
    p.add_argument(
        "link",
        nargs="?",
        default=None,
        metavar="LINK",
        help="an alert link (tenant-events://alert/TENANT/ID, or a team's tenant-events://team-alert/TENANT/KEY) to open, as the desktop passes it",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    link = None
    if args.link is not None:  # first: a hostile link (any web page can hand one over) changes nothing
        link = parse_alert_link(args.link)
        if link is None:
            raise UserFixableError(
                f"not an alert link: {args.link[:200]!a}",
                "expected tenant-events://alert/TENANT/ID or tenant-events://team-alert/TENANT/KEY",
            )
    limit_malloc_arenas()  # before any thread allocates (malloc_arenas.py)
    paths = AppPaths.resolve(args.data_dir).ensure()
    setup_logging(paths.log_dir, logging.DEBUG if args.verbose else logging.INFO)
    os.environ.setdefault("QT_API", "pyside6")
    from tenant_events.crash import enable_fatal_log
    from tenant_events.store.memory_limit import limit_sqlite_memory
    from tenant_events.ui.app.desktop_app import AppOptions
    from tenant_events.ui.app.launch import run_gui

    enable_fatal_log(paths.log_dir)
    limit_sqlite_memory()  # the window's caches share one bound (store/memory_limit.py)
    options = AppOptions(demo=bool(args.demo), minimized=bool(args.minimized), open_alert=link)
    # The run marker is set by run_gui once this process is the running instance (not a hand-over).
    return run_gui(paths, options, [*sys.argv[:1], *([args.link] if link else [])])
