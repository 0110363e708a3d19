"""`tenant-events stream`: follow a tenant's event stream headless into the local store (issue 5).

Token, in order: `TENANT_EVENTS_ACCESS_TOKEN`; `--client-id` + `TENANT_EVENTS_CLIENT_SECRET` (client
credentials, for services); the stored sign-in of `--tenant` (`tenant-events login`). Resumes from the stored
cursor; runs until SIGINT/SIGTERM, then commits what it received and exits 0. State changes go to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
from datetime import UTC, datetime
from typing import IO, Any
from urllib.parse import urlsplit

from tenant_events.cli.hub_args import add_hub_args
from tenant_events.cli.hub_view import hub_monitor
from tenant_events.cli.options import add_data_dir
from tenant_events.errors import ConfigError, SignInRequired, StorageError, UserFixableError
from tenant_events.http import InsecureURLError, api_client, check_url
from tenant_events.logs import setup_logging
from tenant_events.monitor import TenantMonitor
from tenant_events.paths import AppPaths
from tenant_events.settings import TenantProfile, load_settings, slugify
from tenant_events.store import CommitResult, EventReader
from tenant_events.stream.client_credentials import ClientCredentialsTokenProvider
from tenant_events.stream.engine import EngineConfig
from tenant_events.stream.request import format_from_timestamp
from tenant_events.stream.states import StateChange, StreamState
from tenant_events.stream.tokens import StaticTokenProvider, TokenProvider
from tenant_events.wire import EVENT_TYPE_NAMES

TOKEN_ENV = "TENANT_EVENTS_ACCESS_TOKEN"
SECRET_ENV = "TENANT_EVENTS_CLIENT_SECRET"

EXIT_REFUSED = 7  # cli/main.py: the tenant refused the request (400/403/404)


class TenantRefused(UserFixableError):
    exit_code = EXIT_REFUSED


def event_type_arg(value: str) -> str:
    if value not in EVENT_TYPE_NAMES:
        raise argparse.ArgumentTypeError(
            f"unknown event type {value!r} (see spec 000 'Events', e.g. user.created)"
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
        "5 storage · 6 network · 7 the tenant refused the request (400/403/404)",
    )
    add_tenant_args(p)
    p.add_argument("--jsonl", metavar="PATH|-", help="also append each stored event as a JSON line")
    add_hub_args(p, required=False)
    p.set_defaults(run=run)


def add_tenant_args(p: argparse.ArgumentParser) -> None:
    """Which tenant to follow and how: shared by `stream` and `relay`."""
    where = p.add_mutually_exclusive_group()
    where.add_argument("--tenant", metavar="NAME", help="tenant profile (from tenant-events login)")
    where.add_argument(
        "--base-url", metavar="URL", help="the stream's {base_url}, e.g. https://tenant.example/api/v2"
    )
    p.add_argument("--name", metavar="NAME", help="database name for --base-url (default: from the host)")
    p.add_argument("--event-type", metavar="T", action="append", type=event_type_arg, default=[],
                   help="only this event type (repeatable); default all")  # fmt: skip
    p.add_argument("--from-timestamp", metavar="TS", type=from_timestamp_arg,
                   help="start here when no cursor is stored yet (RFC 3339)")  # fmt: skip
    add_data_dir(p)
    p.add_argument("--client-id", metavar="ID", help=f"client credentials (secret from ${SECRET_ENV})")
    p.add_argument("--stall-timeout", metavar="S", type=float, default=90.0,
                   help="reconnect after this many seconds without a message (default 90)")  # fmt: skip


def tenant_source(
    args: argparse.Namespace, paths: AppPaths
) -> tuple[str, str, str, str, TenantProfile | None]:
    """(database name, base_url, auth_url, audience, profile or None)."""
    if args.base_url:
        try:
            base_url = check_url(args.base_url).rstrip("/")
        except InsecureURLError as exc:
            raise ConfigError("--base-url", str(exc)) from None
        parts = urlsplit(base_url)
        auth_url = f"{parts.scheme}://{parts.netloc}"
        return args.name or slugify(parts.netloc), base_url, auth_url, base_url + "/", None
    profile = load_settings(paths).tenant(args.tenant)
    return profile.name, profile.base_url, profile.auth_url, profile.audience, profile


async def token_provider(
    args: argparse.Namespace,
    auth_url: str,
    audience: str,
    profile: TenantProfile | None,
    stack: contextlib.AsyncExitStack,
) -> TokenProvider:
    env_token = os.environ.get(TOKEN_ENV)
    if env_token:
        return StaticTokenProvider(env_token)
    if args.client_id:
        return ClientCredentialsTokenProvider(
            auth_url, args.client_id, os.environ.get(SECRET_ENV, ""), audience
        )
    if profile is None:
        raise SignInRequired(
            f"no access token for {auth_url}",
            f"set {TOKEN_ENV}, use --client-id with {SECRET_ENV}, or sign in first: tenant-events login",
        )
    from tenant_events.auth.secret_store import open_secret_store
    from tenant_events.auth.sign_in import restore_session

    http = await stack.enter_async_context(api_client())
    return await restore_session(http, profile, open_secret_store().store)


class _JsonlSink:
    """Writes each committed batch's new events as stream-message lines (the export format)."""

    def __init__(self, target: str, reader: EventReader) -> None:
        self._reader = reader
        # Events can hold personal data: a new file is the user's alone (0600), like the export (mkstemp).
        self._out: IO[str] = (
            sys.stdout
            if target == "-"
            else os.fdopen(
                os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "a", encoding="utf-8"
            )
        )

    def __call__(self, result: CommitResult) -> None:
        from tenant_events.cli.export_cmd import jsonl_line

        if result.first_seq is None:
            return
        for event, raw in self._reader.range_raw(result.first_seq, result.last_seq or result.first_seq):
            self._out.write(jsonl_line(event, raw))
        self._out.flush()

    def close(self) -> None:
        if self._out is not sys.stdout:
            self._out.close()


def report_state(change: StateChange) -> None:
    print(f"tenant-events: {change.state.value}: {change.message}", file=sys.stderr, flush=True)


async def _main(args: argparse.Namespace) -> int:
    paths = AppPaths.resolve(args.data_dir).ensure()
    setup_logging(paths.log_dir, stderr=False)
    async with contextlib.AsyncExitStack() as stack:
        monitor = await hub_monitor(args, paths)  # --hub, or --tenant naming a hub profile
        if monitor is None:
            name, base_url, auth_url, audience, profile = tenant_source(args, paths)
            event_types = tuple(args.event_type) or tuple(profile.event_types if profile else ())
            tokens = await token_provider(args, auth_url, audience, profile, stack)
            config = EngineConfig(base_url=base_url, event_types=event_types, from_timestamp=args.from_timestamp,
                                  name=name, stall_timeout=args.stall_timeout)  # fmt: skip
            monitor = TenantMonitor(name, paths, config, tokens)
        monitor.on_state.append(report_state)
        await monitor.start()
        if monitor.notice:
            print(f"tenant-events: {monitor.notice.message}", file=sys.stderr)
        sink = None
        if args.jsonl:
            reader = monitor.open_reader()
            stack.callback(reader.close)
            sink = _JsonlSink(args.jsonl, reader)
            stack.callback(sink.close)
            monitor.on_commit.append(sink)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, monitor.stop_soon)
        try:
            final = await monitor.wait()
        finally:
            await monitor.stop()
        stats = monitor.stats
        print(f"tenant-events: {stats.events_stored} events stored, {stats.duplicates_dropped} duplicates dropped, "
              f"{stats.rejected} rejected", file=sys.stderr)  # fmt: skip
        return exit_code_of(final)


def exit_code_of(final: StateChange) -> int:
    if final.state is StreamState.STOPPED:
        return 0
    if final.state is StreamState.SIGNED_OUT:
        return SignInRequired.exit_code
    if final.reason == "storage":
        return StorageError.exit_code
    return EXIT_REFUSED


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_main(args))
