"""`tenant-events relay`: follow a tenant into a team hub (NATS JetStream), for any number of viewers.

The relay signs in to the tenant like `stream` does (a --tenant profile, --client-id with
$TENANT_EVENTS_CLIENT_SECRET, or $TENANT_EVENTS_ACCESS_TOKEN) and publishes every event to the hub; viewers
run `tenant-events stream --hub URL --hub-tenant NAME` and never touch the tenant. Start two relays for
availability: one streams, the other waits and takes over within seconds of the first one's end. Runs until
SIGINT/SIGTERM; roles and stream states go to stderr.

With --alerts-to, the relay holding the lease also evaluates the alert rules once for the whole team (the
built-in pack and the alert settings of its own settings file), publishes the alerts on the hub for the viewers,
and delivers them to the named destinations (`tenant-events destinations list`). A standby that takes over
resumes the deliveries from the state the hub keeps, under the same dedup keys.

With --team-archive and --team-archive-path, the relay holding the lease also moves events older than the live
tier's setting (--keep-live, or the settings file's) into the team's shared archive, DuckLake with its catalog
in PostgreSQL, every --team-archive-every seconds; viewers started with the same options read it. The catalog
user's password comes from $TENANT_EVENTS_TEAM_ARCHIVE_PASSWORD (then kept in the keyring) or the keyring.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, Final

from tenant_events.cli.hub_args import add_hub_args, hub_options, team_archive
from tenant_events.cli.options import number
from tenant_events.cli.stream_cmd import add_tenant_args, exit_code_of, report_state
from tenant_events.cli.stream_target import resolve_target, stream_source
from tenant_events.cli.tier_args import tiers
from tenant_events.errors import ConfigError
from tenant_events.logs import setup_logging
from tenant_events.paths import AppPaths
from tenant_events.tenant.link import TenantLink

if TYPE_CHECKING:
    from nats.aio.client import Client as NATS

LeaderWork = Callable[["NATS", Callable[[], bool]], Awaitable[None]]


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "relay",
        help="follow a tenant into a team hub (NATS JetStream) that viewers read from",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Exit codes: 0 stopped by SIGINT/SIGTERM · 2 usage · 3 bad option or profile · 4 sign-in "
        "required (tenant or hub) · 6 hub unreachable · 7 the tenant refused the request",
    )
    add_tenant_args(p)
    add_hub_args(p, required=True)
    p.add_argument(
        "--hub-replicas",
        metavar="N",
        type=int,
        choices=(1, 3, 5),
        help="replicas of a new stream (default: 3 on a cluster, 1 on a single server)",
    )
    p.add_argument(
        "--hub-retention-days",
        metavar="D",
        type=number(0, 36500, above=True),
        default=30.0,
        help="how long a new stream keeps events (up to 36500, default 30)",
    )
    p.add_argument(
        "--lease-seconds",
        metavar="S",
        type=number(1, 600),
        default=5.0,
        help="a standby takes over this long after the streaming relay is gone (1 to 600, default 5)",
    )
    p.add_argument(
        "--alerts-to",
        metavar="NAME",
        nargs="+",
        default=None,
        help="evaluate the team's alerts here and deliver them to these destinations",
    )
    p.add_argument(
        "--team-archive-every",
        metavar="S",
        type=number(0.1, 86400),
        default=600.0,
        help="seconds between moves into the team archive (default 600)",
    )
    p.set_defaults(run=run)


SLOW_STOP_S: Final = 10.0  # a stop still going after this long says what it waits for


def _role(role: str, message: str) -> None:
    print(f"tenant-events: {role}: {message}", file=sys.stderr, flush=True)


async def _main(args: argparse.Namespace) -> int:
    from tenant_events.hub.provision import StreamPlan
    from tenant_events.hub.relay import Relay, RelayConfig
    from tenant_events.hub.subjects import HubNames

    paths = AppPaths.resolve(args.data_dir).ensure()
    setup_logging(paths.log_dir, stderr=False)
    target = resolve_target(args, paths)
    name = target.name
    hub = hub_options(args)
    try:
        names = HubNames(args.hub_tenant or name)
    except ValueError as exc:
        raise ConfigError("--hub-tenant", str(exc)) from None
    plan = StreamPlan(
        retention_days=args.hub_retention_days, replicas=args.hub_replicas, lease_ttl=args.lease_seconds
    )
    lake = team_archive(args, viewer=False)  # before anything starts: a bad option is one line
    team = None
    if args.alerts_to is not None:
        from tenant_events.tenant.deliveries import keyring_opener
        from tenant_events.tenant.team_alerts import TeamAlerts, check_destinations

        wanted = check_destinations(paths, args.alerts_to)
        team = TeamAlerts(
            name, paths, hub, names, wanted, keyring_opener(), on_note=lambda m: _role("alerts", m)
        )
    async with TenantLink(
        name, paths, await stream_source(args, target), retention=tiers(args, paths)
    ) as link:
        engine, tokens = await link.engine_and_tokens()  # the relay streams the tenant itself, into the hub
        work: list[LeaderWork] = [team] if team is not None else []
        if lake is not None:
            from tenant_events.tenant.lake_mover import LakeMover

            mover = LakeMover(
                name, paths, hub, names, lake, tiers(args, paths), args.team_archive_every, _lake_note
            )
            work.append(mover)
        relay = Relay(
            RelayConfig(engine, hub, names, plan),
            tokens,
            leader_work=_together(work),
            leader_work_is=_is(alerts=team is not None, moves=lake is not None),
        )
        if team is not None:
            team.stopping = lambda: relay.stopping
        relay.on_role.append(_role)
        relay.on_state.append(report_state)
        loop = asyncio.get_running_loop()

        def stop() -> None:
            relay.stop()
            loop.call_later(SLOW_STOP_S, _say_pending)

        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop)
        final = await relay.run()
    print(
        f"tenant-events: {relay.published} events published to the hub, {relay.duplicates} were there already",
        file=sys.stderr,
    )
    return exit_code_of(final)


def _lake_note(message: str) -> None:
    _role("team archive", message)


def _is(*, alerts: bool, moves: bool) -> tuple[str, str]:
    """What the leader's work is, said when it stopped: the role its lines go under and its name in a sentence."""
    if not alerts:
        return "team archive", "the moves into the team archive"
    return "alerts", "the team's alerts and the moves into the team archive" if moves else "the team's alerts"


def _together(work: list[LeaderWork]) -> LeaderWork | None:
    """The leader's pieces of work run side by side (the team's alerts, the moves into the team archive)."""
    if len(work) <= 1:
        return work[0] if work else None

    async def both(nc: NATS, fence: Callable[[], bool]) -> None:
        async def one(piece: LeaderWork) -> None:
            await piece(nc, fence)

        async with asyncio.TaskGroup() as group:
            for piece in work:
                group.create_task(one(piece))

    return both


def _say_pending() -> None:
    """Still stopping long after the signal: say what it waits for (each unfinished task's chain of awaits, and
    where in this program it stands)."""
    waits = []
    for task in asyncio.all_tasks():
        frames: list[FrameType] = []
        awaited: Any = task.get_coro()
        while getattr(awaited, "cr_frame", None) is not None:
            frames.append(awaited.cr_frame)  # (a coroutine's await chain: get_stack stops at its first frame)
            awaited = getattr(awaited, "cr_await", None)
        if task.done() or not frames:
            continue
        ours = [f for f in frames if f"{os.sep}tenant_events{os.sep}" in f.f_code.co_filename] or frames
        at = f"{Path(ours[-1].f_code.co_filename).name}:{ours[-1].f_lineno}"
        chain = " > ".join(f.f_code.co_name for f in frames)
        waits.append(f"{task.get_name()}: {chain} ({at})")
    _role("stopping", f"still stopping after {SLOW_STOP_S:.0f} s; waiting in " + "; ".join(sorted(waits)))


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_main(args))
