"""`tenant-events simulator`: run the bundled tenant simulator on 127.0.0.1 until SIGINT/SIGTERM.

Prints `Tenant simulator ready: base_url=... auth_url=...` (and the demo clients) once it listens.
Only the simulator package is imported, never the client (the simulator is written from the service's contract).
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Any

from tenant_events.cli.options import finite, number
from tenant_events.errors import ConfigError, StorageError
from tenant_events.paths import AppPaths

# flag → (config field, type, help). Defaults come from SimulatorConfig, shown in --help.
_OPTIONS: tuple[tuple[str, str, type, str], ...] = (
    ("--seed", "seed", int, "seed of the generated tenant life (same seed, same events)"),
    ("--rate", "rate", float, "live events per second (0 = none)"),
    ("--burst-every", "burst_every", float, "seconds between bursts of activity (0 = none)"),
    ("--burst-size", "burst_size", int, "events per burst"),
    ("--backlog", "backlog", int, "make sure N past events exist before serving (1M takes seconds)"),
    ("--heartbeat", "heartbeat", float, "seconds between offset-only heartbeats"),
    ("--keepalive", "keepalive", float, "seconds of silence before a ': keep-alive' comment"),
    ("--retry-ms", "retry_ms", int, "the SSE retry: value sent on connect"),
    (
        "--rotate-after",
        "rotate_after",
        float,
        "close each stream after N s with connection_timeout (0 = never)",
    ),
    ("--retention", "retention", int, "keep only the newest N events; older cursors get 410 (0 = all)"),
    ("--max-connections", "max_connections", int, "concurrent event streams before 403"),
    ("--rate-limit", "rate_limit", int, "/events requests per --rate-window per client before 429"),
    ("--rate-window", "rate_window", float, "seconds of the rate-limit window"),
    ("--token-ttl", "token_ttl", int, "access token lifetime in seconds"),
    ("--id-length", "id_length", int, "characters after evt_/est_: 16 (spec) or 22 (live service)"),
    ("--speed", "speed", float, "the tenant's clock runs N times faster (live events, bursts, scenarios)"),
    (
        "--live-mix",
        "live_mix",
        str,
        "routine: live events leave out what alert rules look for; full: all kinds",
    ),
    ("--scenario", "scenario", str, "act out alert-worthy incidents: demo, or a JSON file of timed steps"),
)
_FAULTS: tuple[tuple[str, str, type, str], ...] = (
    ("--drop-mid-frame", "drop_mid_frame", int, "fault: the next N streams are cut in the middle of a frame"),
    ("--stall", "stall", int, "fault: the next N streams go silent after the headers"),
    ("--stream-error", "stream_error", str, "fault: the first stream ends with this in-stream error code"),
    ("--malformed", "malformed", str, "fault: bad_json|unknown_kind|bad_envelope|oversized once"),
    ("--http-429", "http_429", int, "fault: the next N /events requests get 429"),
    ("--http-5xx", "http_5xx", int, "fault: the next N /events requests get 503"),
    ("--slow-drip", "slow_drip", float, "fault: seconds between half-frames"),
    ("--duplicate-every", "duplicate_every", int, "fault: after every N events re-send the previous one"),
)


def register(subparsers: Any) -> None:
    from tenant_events.simulator.config import SimulatorConfig

    defaults = SimulatorConfig()
    p: argparse.ArgumentParser = subparsers.add_parser(
        "simulator",
        help="run the local tenant simulator (no account needed)",
        description="Serve a simulated tenant: auth API, /api/v2/events SSE stream, seeded activity.",
    )
    p.add_argument(
        "--port",
        type=number(0, 65535, integer=True),
        default=0,
        help="TCP port on 127.0.0.1 (0 = any free port)",
    )
    p.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="keep key, event log and grants here (default: <app data dir>/simulator)",
    )
    p.add_argument("--ephemeral", action="store_true", help="keep nothing on disk")
    p.add_argument(
        "--real-names", action="store_true", help="a0tenant/a0stream/a0purpose like the live service"
    )
    for flag, name, kind, text in _OPTIONS:
        p.add_argument(
            flag,
            dest=name,
            type=finite if kind is float else kind,
            default=getattr(defaults, name),
            help=f"{text} [%(default)s]",
        )
    for flag, name, kind, text in _FAULTS:
        p.add_argument(flag, dest=name, type=finite if kind is float else kind, default=None, help=text)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tenant_events.simulator.config import SimulatorConfig
    from tenant_events.simulator.faults import Faults
    from tenant_events.simulator.server import SimulatorServer

    data_dir = None if args.ephemeral else (args.data_dir or AppPaths.resolve().simulator_dir)
    options = {name: getattr(args, name) for _f, name, _k, _t in _OPTIONS}
    try:
        config = SimulatorConfig(port=args.port, data_dir=data_dir, real_names=args.real_names, **options)
        knobs = {name: getattr(args, name) for _f, name, _k, _t in _FAULTS if getattr(args, name) is not None}
        Faults().update(**knobs)  # validate before starting
        server = SimulatorServer(config, on_ready=lambda: _announce(server))
    except ValueError as exc:
        raise ConfigError("simulator", str(exc)) from exc
    except OSError as exc:
        if exc.filename:  # the data dir, not the port: another user's, or a file
            raise StorageError(
                f"cannot use {exc.filename}: {exc.strerror}", "use another --data-dir"
            ) from None
        raise ConfigError("--port", str(exc), "choose another port or use --port 0") from exc
    # Only now: a bad option or data dir above is the CLI's one line, not also a log line beside it.
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    server.state.faults.update(**knobs)
    return _serve(server)


def _announce(server: Any) -> None:
    for line in server.ready_lines():
        print(line, flush=True)


def _serve(server: Any) -> int:
    import asyncio

    asyncio.run(server.serve())
    return 0
