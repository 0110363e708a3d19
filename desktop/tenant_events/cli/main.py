"""`tenant-events` console command: one parser, one subcommand module per verb.

With no subcommand it starts the desktop app. Each module in COMMANDS exposes
`register(subparsers) -> None` (adding its parser with `set_defaults(run=...)`) and a `run(args) -> int`.
Modules are imported lazily so `tenant-events --version` and the CLI never load Qt.

Exit codes (shared by every subcommand):
  0 success · 1 unexpected error (a bug; see the log) · 2 usage or user-fixable error · 3 bad setting/profile
  4 sign-in required · 5 storage error · 6 network error · 7 the tenant refused the request (400/403/404)
  130 interrupted before any work was done
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import stat
import sys
from collections.abc import Sequence

from tenant_events import __version__
from tenant_events.errors import UserFixableError

# Subcommand modules under tenant_events.cli, in --help order.
COMMANDS: tuple[str, ...] = (
    "gui_cmd",
    "simulator_cmd",
    "stream_cmd",
    "export_cmd",
    "login_cmd",
    "alerts_cmd",
    "rules_cmd",
    "destinations_cmd",
    "triage_cmd",
    "timeline_cmd",
    "reindex_cmd",
    "relay_cmd",
)

EPILOG = __doc__.split("Exit codes", 1)[1].join(["Exit codes", ""]) if __doc__ else None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tenant-events",
        description="Follow an identity tenant's event stream: desktop tray app (default) and headless CLI.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"tenant-events {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"tenant_events.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"tenant_events.cli.{name}":
                raise
            continue
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    # No subcommand (or only GUI flags such as --demo): the desktop app.
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version")):
        argv = ["gui", *argv]
    args = parser.parse_args(argv)
    run = getattr(args, "run", None)
    if run is None:
        parser.print_help()
        return 2
    log = logging.getLogger("tenant_events")
    try:
        return int(run(args))
    except UserFixableError as exc:
        if log.hasHandlers():  # else logging's last-resort handler would print the line a second time
            log.error("%s", exc)
        print(f"tenant-events: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError as exc:
        if not _stdout_is_pipe():
            return _unexpected(args, exc)
        # whoever read stdout stopped (`| head`): nothing to say, nothing to report
        from tenant_events.cli.output_file import quiet_stdout

        quiet_stdout()
        return 0
    except Exception as exc:
        return _unexpected(args, exc)


def _stdout_is_pipe() -> bool:
    try:
        mode = os.fstat(sys.stdout.fileno()).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _unexpected(args: argparse.Namespace, exc: BaseException) -> int:
    """A bug: one line for the user, the whole story in a report."""
    import traceback

    from tenant_events.crash import write_report
    from tenant_events.logs import redact
    from tenant_events.paths import AppPaths

    log = logging.getLogger("tenant_events")
    # Redacted here, not by the handlers: a command may fail before it installed them.
    trace = redact("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    if log.hasHandlers():
        log.error("unexpected error\n%s", trace)
    report = write_report(AppPaths.resolve(getattr(args, "data_dir", None)).log_dir, exc)
    where = f"; the report is in {report}" if report else ""
    print(
        f"tenant-events: unexpected error: {type(exc).__name__}: {redact(str(exc))}{where}", file=sys.stderr
    )
    return 1
