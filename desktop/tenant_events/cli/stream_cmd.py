"""`tenant-events stream`: follow a tenant's event stream headless into the local store.

Token, in order: `TENANT_EVENTS_ACCESS_TOKEN`; `--client-id` + `TENANT_EVENTS_CLIENT_SECRET` (client
credentials, for services); the stored sign-in (`tenant-events login`) of `--tenant`, or of the profile that
streams from `--base-url`. Resumes from the stored cursor; runs until SIGINT/SIGTERM, then commits what it
received and exits 0. State changes go to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import IO, Any

from tenant_events.cli import stream_alerts, stream_deliveries
from tenant_events.cli.first_contact import DEFAULT_TIMEOUT, FirstContact
from tenant_events.cli.hub_args import add_hub_args
from tenant_events.cli.hub_view import hub_source
from tenant_events.cli.options import add_data_dir, number, profile_name
from tenant_events.cli.output_file import cannot_write, quiet_stdout, refuse_database_target
from tenant_events.cli.stream_target import SECRET_ENV, resolve_target, stream_source
from tenant_events.cli.tier_args import add_tier_args, tiers
from tenant_events.errors import ConfigError, NetworkError, SignInRequired, StorageError
from tenant_events.logs import setup_logging
from tenant_events.paths import AppPaths
from tenant_events.store.reader import EventReader
from tenant_events.store.tier_disk import disk_per_tier
from tenant_events.tenant.committed_rows import CommittedRows
from tenant_events.tenant.link import TenantLink
from tenant_events.tenant.rules_follow import settings_stamp
from tenant_events.tenant.sources import Source
from tenant_events.values.stream_states import StateChange, StreamState, state_line
from tenant_events.wire import EVENT_TYPE_NAMES
from tenant_events.wire.from_timestamp import format_from_timestamp

EXIT_REFUSED = 7  # cli/main.py: the tenant refused the request (400/403/404)


def event_type_arg(value: str) -> str:
    if value not in EVENT_TYPE_NAMES:
        raise argparse.ArgumentTypeError(
            f"unknown event type {value!r}: use one of {', '.join(sorted(EVENT_TYPE_NAMES))}"
        )
    return value


def from_timestamp_arg(value: str) -> str:
    """Any ISO 8601 date-time → the 20-character RFC 3339 form the service accepts."""
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a date-time like 2026-11-22T08:00:00Z") from None
    return format_from_timestamp(moment if moment.tzinfo else moment.replace(tzinfo=UTC))


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "stream",
        help="follow the event stream headless into the local store",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Exit codes: 0 stopped by SIGINT/SIGTERM · 2 usage · 3 bad profile · 4 sign-in required · "
        "5 storage · 6 network (the server never answered within --unreachable-timeout) · 7 the tenant refused the request (400/403/404)",
    )
    add_tenant_args(p)
    p.add_argument("--jsonl", metavar="PATH|-", help="also append each stored event as a JSON line")
    stream_alerts.add_arguments(p)
    p.add_argument(
        "--unreachable-timeout",
        metavar="S",
        type=number(0, 86400),
        default=DEFAULT_TIMEOUT,
        help="until the server has answered once, give up after S seconds of DNS, connection or TLS "
        f"failures with exit 6 (default {DEFAULT_TIMEOUT:g}; 0 keeps trying). Once a stream has been "
        "open, network loss is retried for as long as it lasts",
    )
    add_hub_args(p, required=False)
    p.set_defaults(run=run)


def add_tenant_args(p: argparse.ArgumentParser) -> None:
    """Which tenant to follow and how: shared by `stream` and `relay`."""
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--tenant", metavar="NAME", type=profile_name, help="tenant profile (from tenant-events login)"
    )
    where.add_argument(
        "--base-url", metavar="URL", help="the stream's {base_url}, e.g. https://tenant.example/api/v2"
    )
    p.add_argument(
        "--name",
        metavar="NAME",
        type=profile_name,
        help="database name for --base-url (default: its profile's name, else from the host)",
    )
    p.add_argument(
        "--event-type",
        metavar="T",
        action="append",
        type=event_type_arg,
        default=[],
        help="only this event type (repeatable); default all",
    )
    p.add_argument(
        "--from-timestamp",
        metavar="TS",
        type=from_timestamp_arg,
        help="start here when no cursor is stored yet (RFC 3339)",
    )
    add_data_dir(p)
    add_tier_args(p)
    p.add_argument("--client-id", metavar="ID", help=f"client credentials (secret from ${SECRET_ENV})")
    p.add_argument(
        "--stall-timeout",
        metavar="S",
        type=number(1, 3600),
        default=90.0,
        help="reconnect after this many seconds without a message (1 to 3600, default 90)",
    )


def _open_output(target: str) -> IO[str]:
    """Opened before the stream starts, so a bad path is one line and nothing was fetched for it."""
    if target == "-":
        return sys.stdout
    try:
        # Events can hold personal data: a new file is the user's alone (0600), like the export (mkstemp).
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    except OSError as exc:
        raise cannot_write(target, exc) from None
    return os.fdopen(fd, "a", encoding="utf-8")


class _JsonlSink:
    """Writes each committed batch's new events as stream-message lines (the export format)."""

    def __init__(self, out: IO[str], reader: EventReader, on_closed: Callable[[], None]) -> None:
        self._reader = reader
        self._out = out
        self._on_closed = on_closed
        self._closed = False

    def __call__(self, rows: CommittedRows) -> None:
        from tenant_events.cli.export_cmd import jsonl_line

        if self._closed:
            return
        try:
            for event, raw in self._reader.range_raw(rows.first_seq, rows.last_seq):
                self._out.write(jsonl_line(event, raw))
            self._out.flush()
        except BrokenPipeError:  # `| head` has what it wanted: stop streaming, quietly
            self._closed = True
            quiet_stdout()
            self._on_closed()
        except OSError as exc:
            raise cannot_write(getattr(self._out, "name", "the output"), exc) from None

    def close(self) -> None:
        if self._out is not sys.stdout:
            self._out.close()


def report_state(change: StateChange) -> None:
    print(f"tenant-events: {state_line(change)}", file=sys.stderr, flush=True)


async def _main(args: argparse.Namespace) -> int:
    paths = AppPaths.resolve(args.data_dir)
    refuse_database_target(args.jsonl, args.alerts_jsonl, paths=paths)
    paths.ensure()
    setup_logging(paths.log_dir, stderr=False)
    async with contextlib.AsyncExitStack() as stack:
        out = _open_output(args.jsonl) if args.jsonl else None
        if out is not None and out is not sys.stdout:
            stack.callback(out.close)
        contact: FirstContact | None = None
        source: Source
        hub = await hub_source(args, paths)  # --hub, or --tenant naming a hub profile
        if hub is not None:
            name, source = hub
        else:
            target = resolve_target(args, paths)
            name, source = target.name, await stream_source(args, target)
        seen = settings_stamp(paths)  # before the rules are read: a save in between is taken in
        alerts = stream_alerts.rules(args, paths)
        link = TenantLink(name, paths, source, alerts=alerts, retention=tiers(args, paths))
        stack.push_async_callback(link.close)
        if hub is None:
            contact = FirstContact(target.base_url, args.unreachable_timeout, link.stop_soon)
            link.on_state.append(contact.observe)
        link.on_state.insert(0, report_state)
        stream_alerts.report(args, link, stack)
        stream_alerts.follow(link, paths, alerts, seen, stack)
        team = await stream_alerts.team_view(link) if hub is not None else None
        await link.start()
        if team is not None:
            stack.push_async_callback(team.stop)
            await team.start()
            print(stream_alerts.TEAM_LINE, file=sys.stderr)
        elif hub is not None:
            stream_alerts.watch_team(link, stack)
        stream_deliveries.deliver(args, link, paths, stack)
        watcher = asyncio.create_task(contact.watch(), name="first-contact") if contact else None
        if link.notice:
            print(f"tenant-events: {link.notice.message}", file=sys.stderr)
        if out is not None:
            reader = link.open_reader()
            stack.callback(reader.close)
            link.on_commit.append(_JsonlSink(out, reader, link.stop_soon))
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, link.stop_soon)
        try:
            final = await link.wait()
        finally:
            if watcher is not None:
                watcher.cancel()
            await link.stop()
        if contact is not None and contact.error is not None:
            raise contact.error
        stats = link.stats
        disk = disk_per_tier(link.database_file)  # (the tiers' settings: --keep-live, --keep-archive)
        print(f"tenant-events: {link.name} takes {disk.words()} on disk", file=sys.stderr)
        print(  # the last line
            f"tenant-events: {stats.events_stored} events stored, {stats.duplicates_dropped} duplicates dropped, "
            f"{stats.rejected} rejected",
            file=sys.stderr,
        )
        return exit_code_of(final)


def exit_code_of(final: StateChange) -> int:
    if final.state is StreamState.STOPPED:
        return 0
    if final.state is StreamState.SIGNED_OUT:
        return SignInRequired.exit_code
    if final.reason == "storage":
        return StorageError.exit_code
    if final.reason == "untrusted_certificate":  # the server's identity could not be proven: a network error
        return NetworkError.exit_code
    if final.reason == "config":  # a hub profile's CA file or key cannot be used
        return ConfigError.exit_code
    return EXIT_REFUSED


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_main(args))
