"""`tenant-events` console command: one parser, one subcommand module per verb.

With no subcommand it starts the desktop app. Each module in COMMANDS exposes
`register(subparsers) -> None` (adding its parser with `set_defaults(run=...)`) and a `run(args) -> int`.
Only the module of the verb that runs is imported, so `--version` and `--help` load none of them and the CLI
never loads Qt.

Exit codes (shared by every subcommand):
  0 success · 1 unexpected error (a bug; see the log) · 2 usage or user-fixable error · 3 bad setting/profile
  4 sign-in required · 5 storage error · 6 network error · 7 the tenant refused the request (400/403/404)
  130 interrupted before any work was done
"""

from __future__ import annotations

import argparse
import errno
import importlib
import logging
import os
import stat
import sys
from collections.abc import Sequence

from tenant_events import __version__
from tenant_events.cli.options import queries_as_typed
from tenant_events.errors import UserFixableError
from tenant_events.server_text import shown
from tenant_events.url_forms import ALERT_LINK_SCHEME

# the hidden first argument that makes this process the alert rules' own (alerts/evaluator_child.py CHILD_ARG,
# which tests/alerts/test_evaluator_process.py holds equal to this)
ALERT_EVALUATOR = "_alert-evaluator"
# How much lower than its parent the rules' process runs its catch-ups and its start-up (niceness, added to the
# parent's; Linux: that thread's alone). At 5, when both want a core, the store gets three times the rules' share
# (CFS weights 1024 and 335). Lower (10 to 19) would leave them only the CPU the store leaves idle, but on a machine
# loaded by other work in the same session (a test suite's workers) it all but stopped the rules: a 60,000-event
# catch-up was not evaluated within the tests' bounds.
ALERT_CATCH_UP_NICENESS = 5

# Subcommand modules under tenant_events.cli; --help lists the verbs in the order of VERBS below.
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
    "silences_cmd",
    "timeline_cmd",
    "access_cmd",
    "reindex_cmd",
    "relay_cmd",
)

# Each verb, the module that registers it and its one line in --help: only the module of the verb that runs is
# imported (the store, the tenant facade and sign-in take a quarter of a second), so --version and --help are
# instant. tests/cli/test_cli_start.py checks this table against what the modules register.
VERBS: dict[str, tuple[str, str]] = {
    "gui": ("gui_cmd", "start the desktop tray app (the default)"),
    "simulator": ("simulator_cmd", "run the local tenant simulator (no account needed)"),
    "stream": ("stream_cmd", "follow the event stream headless into the local store"),
    "export": ("export_cmd", "write every stored event as JSONL or CSV"),
    "login": ("login_cmd", "sign in to a tenant in your browser"),
    "logout": ("login_cmd", "sign out: revoke the refresh token and remove it from the keyring"),
    "alerts": ("alerts_cmd", "list the alerts the rules raised, newest first"),
    "rules": ("rules_cmd", "list and check the alert rules, or try one on stored history"),
    "timeline": ("timeline_cmd", "everything stored about one user, organization, group, role or connection"),
    "access": ("access_cmd", "who held which access at a moment, or what changed between two (access diff)"),
    "reindex": ("reindex_cmd", "build the entity directory and access history again from the stored events"),
    "relay": ("relay_cmd", "follow a tenant into a team hub (NATS JetStream) that viewers read from"),
    "destinations": ("destinations_cmd", "where alerts are sent: chat, pager, e-mail, webhooks"),
    "triage": ("triage_cmd", "acknowledge, snooze or resolve a stored alert (with a note)"),
    "silences": ("silences_cmd", "silence alerts for a while: list, add or remove silences"),
}

EPILOG = __doc__.split("Exit codes", 1)[1].join(["Exit codes", ""]) if __doc__ else None


def build_parser(verb: str | None = "") -> argparse.ArgumentParser:
    """The parser with every subcommand's arguments (`verb=""`), or with only `verb`'s (None: only the list).

    A verb left out still appears in --help and among the choices, as a name with its one line.
    """
    from tenant_events.cli.options import OneLineParser

    parser = OneLineParser(
        prog="tenant-events",
        description="Follow an identity tenant's event stream: desktop tray app (default) and headless CLI.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"tenant-events {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    if verb == "" or (verb is not None and verb not in VERBS):
        modules: tuple[str, ...] = COMMANDS  # all of them (an unknown verb: a module added to COMMANDS)
    else:
        modules = (VERBS[verb][0],) if verb else ()
    for name in modules:
        try:
            module = importlib.import_module(f"tenant_events.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"tenant_events.cli.{name}":
                raise
            continue
        module.register(sub)
    for name, (_, line) in VERBS.items():
        if name not in sub.choices:
            sub.add_parser(name, help=line, add_help=False)
    return parser


def _alert_evaluator() -> int:
    """The alert rules' own process. Its start-up (the rules' modules loaded: ~0.3 s of CPU, while the store may be
    catching up beside it) runs on the thread that then runs its catch-ups, at their lower priority; the main
    thread keeps the parent's for live steps (alerts/evaluator_child.py)."""
    from concurrent.futures import ThreadPoolExecutor

    catch_up = ThreadPoolExecutor(1, thread_name_prefix="alerts-catch-up", initializer=_lower_priority)
    child = catch_up.submit(importlib.import_module, "tenant_events.alerts.evaluator_child").result()
    return int(child.main(catch_up))


def _lower_priority() -> None:
    try:
        os.nice(ALERT_CATCH_UP_NICENESS)
    except OSError:  # not allowed here: evaluate at the parent's priority
        logging.getLogger(__name__).debug("niceness not changed")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == [ALERT_EVALUATOR]:  # the alert rules' own process, started by the app or `stream`
        return _alert_evaluator()
    from tenant_events.cli.output_file import stand_in_for_a_closed_stdout

    stand_in_for_a_closed_stdout()
    # No subcommand (or only GUI flags such as --demo): the desktop app.
    # An alert link alone (the desktop menu's `tenant-events %U`) opens it in the app.
    if (
        not argv
        or argv[0].startswith(f"{ALERT_LINK_SCHEME}:")
        or (argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version"))
    ):
        argv = ["gui", *argv]
    parser = build_parser(None if argv[0].startswith("-") else argv[0])
    args = parser.parse_args(queries_as_typed(argv))
    run = getattr(args, "run", None)
    if run is None:
        parser.print_help()
        return 2
    log = logging.getLogger("tenant_events")
    try:
        from tenant_events.tenant.team_archive import use_keyring_passwords

        use_keyring_passwords()  # a database read with a team's archive: its password, when first needed
        code = int(run(args))
        sys.stdout.flush()  # here, not at exit: a full disk behind `>` is then this command's one line
        return code
    except UserFixableError as exc:
        if log.hasHandlers():  # else logging's last-resort handler would print the line a second time
            log.error("%s", shown(str(exc), None))
        # One line, even when the message quotes a server (server_text.py).
        print(f"tenant-events: {shown(str(exc), None)}", file=sys.stderr)
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
    except OSError as exc:
        from tenant_events.cli.output_file import ClosedStdout, cannot_write

        if exc.errno == errno.EBADF and isinstance(sys.stdout, ClosedStdout):  # started with `>&-`
            closed = cannot_write("standard output", exc)
            print(f"tenant-events: {closed}", file=sys.stderr)
            return closed.exit_code
        error = _file_system_error(args, exc)
        if error is None:
            return _unexpected(args, exc)
        print(f"tenant-events: {error}", file=sys.stderr)
        return error.exit_code
    except Exception as exc:
        if interrupted(exc):
            return 130
        return _unexpected(args, exc)


def interrupted(exc: BaseException) -> bool:
    """Ctrl-C that arrived inside a library call: DuckDB stops its query and raises its own error, caused by the
    KeyboardInterrupt (the user stopped the command; not a bug to report)."""
    seen: set[int] = set()
    at: BaseException | None = exc
    while at is not None and id(at) not in seen:
        if isinstance(at, KeyboardInterrupt):
            return True
        seen.add(id(at))
        at = at.__cause__ or at.__context__
    return False


# The file system said no: the data dir (or a file in it) is another user's, a file, read-only or full.
_FILE_SYSTEM = {
    errno.EACCES,
    errno.EPERM,
    errno.ENOTDIR,
    errno.EEXIST,
    errno.EROFS,
    errno.ENOSPC,
    errno.EDQUOT,
    errno.EISDIR,
    errno.ELOOP,
    errno.ENAMETOOLONG,
}


def _file_system_error(args: argparse.Namespace, exc: OSError) -> UserFixableError | None:
    """One line naming the file and what the system said, for a data dir or output that cannot be used."""
    from tenant_events.cli.output_file import quiet_stdout
    from tenant_events.errors import StorageError
    from tenant_events.paths import AppPaths

    if exc.errno not in _FILE_SYSTEM:
        return None
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        quiet_stdout()  # what is still buffered for stdout cannot be written either; say it once
        return StorageError(
            f"cannot write {exc.filename or 'standard output'}: the disk is full",
            "free some space or pick another disk",
        )
    if exc.filename is None:
        return None
    what = {
        errno.EACCES: "permission denied",
        errno.EPERM: "permission denied",
        errno.ENOTDIR: "a part of this path is a file, not a directory",
        errno.EEXIST: "it exists and is not a directory",
        errno.EROFS: "the file system is read-only",
    }
    data_dir = str(AppPaths.resolve(getattr(args, "data_dir", None)).data_dir)
    inside = os.fspath(exc.filename).startswith(data_dir)
    hint = (
        f"check who owns {data_dir} and its files (ls -l), or use another --data-dir"
        if inside
        else ("check who owns it and its permissions (ls -l)")
    )
    if exc.errno in (errno.ENOTDIR, errno.EEXIST):
        hint = "move the file away, or use another --data-dir" if inside else "pick another path"
    return StorageError(f"cannot use {exc.filename}: {what.get(exc.errno or 0, exc.strerror)}", hint)


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
