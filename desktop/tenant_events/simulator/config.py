"""Simulator settings: one frozen dataclass that the CLI flags and `running_simulator(**options)` both fill.

Values the contract leaves open (docs/event-stream.md "Limits": connection count, rate limit, heartbeat, retention) get
defaults taken from the real service (Self-service plan: 4 connections) or chosen to exercise clients.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TENANT = "demo-tenant"
TENANT_DOMAIN = "demo-tenant.sim.local"


@dataclass(frozen=True)
class SimulatorConfig:
    """Everything that shapes one simulator run; see `tenant-events simulator --help` for the meaning."""

    host: str = "127.0.0.1"
    port: int = 0
    data_dir: Path | None = None  # None: nothing persisted (fresh key, log and grants per run)
    seed: int = 1
    rate: float = 2.0  # live events per second (0 = only backlog and /_sim/emit)
    burst_every: float = 30.0  # seconds between bursts of activity (0 = no bursts)
    burst_size: int = 25
    backlog: int = 0  # make sure at least this many past events exist before serving
    heartbeat: float = 15.0  # seconds between offset-only messages on an idle stream
    keepalive: float = 10.0  # seconds between `: keep-alive` comments
    retry_ms: int = 2000  # the `retry:` field sent on connect (docs/event-stream.md "Frames")
    rotate_after: float = 300.0  # seconds before connection_timeout + close (0 = never)
    retention: int = 0  # keep only the newest N events; older cursors get 410 (0 = keep all)
    max_connections: int = 4  # concurrent streams per tenant (the real service's Self-service plan)
    rate_limit: int = 600  # /events requests per rate_window per client
    rate_window: float = 60.0
    token_ttl: int = 300  # access token lifetime, seconds (short, so clients refresh)
    code_ttl: int = 60  # authorization code lifetime, seconds
    id_length: int = 16  # event/stream id characters after the prefix: 16 (the contract) or 22 (live service)
    real_names: bool = False  # a0tenant/... instead of xtenant/... (docs/event-stream.md "Quirks")
    test_purpose_every: int = 97  # roughly one event in N carries xpurpose "test"
    chunk_bytes: int = 256 * 1024  # frames are written in batches of about this size
    speed: float = (
        1.0  # the tenant's clock runs this many times faster: live events, bursts, scenarios, times
    )
    live_mix: str = "routine"  # routine: live traffic leaves out alert-worthy actions; full: every kind
    scenario: str | None = None  # "demo" or a JSON file of timed steps (scenarios.py)

    def __post_init__(self) -> None:
        if self.id_length not in (16, 22):
            raise ValueError(f"id_length must be 16 or 22, got {self.id_length!r}")
        for name in ("rate", "heartbeat", "keepalive", "rotate_after", "rate_window", "burst_every"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)!r}")
        for name in ("backlog", "retention", "max_connections", "rate_limit", "token_ttl", "burst_size"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)!r}")
        if self.heartbeat == 0 or self.keepalive == 0:
            raise ValueError("heartbeat and keepalive must be > 0 seconds")
        if not 0 < self.speed <= 1000:
            raise ValueError(f"speed must be > 0 and at most 1000, got {self.speed!r}")
        if self.live_mix not in ("routine", "full"):
            raise ValueError(f"live_mix must be routine or full, got {self.live_mix!r}")

    def with_options(self, **options: Any) -> SimulatorConfig:
        """A copy with some fields replaced; unknown names raise TypeError naming them."""
        known = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise TypeError(f"unknown simulator option(s): {', '.join(unknown)}")
        if options.get("data_dir") is not None:
            options["data_dir"] = Path(options["data_dir"])
        return dataclasses.replace(self, **options)
