"""Everything one running simulator holds, built once and shared by the HTTP handlers.

Only the server's event loop thread mutates it (the test handle reaches it over the admin endpoints),
except `tokens`, which is immutable after start and may be used to mint test tokens from any thread.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from tenant_events.simulator.activity import Activity
from tenant_events.simulator.clients import ClientRegistry
from tenant_events.simulator.config import SimulatorConfig
from tenant_events.simulator.event_log import EventLog
from tenant_events.simulator.faults import Faults
from tenant_events.simulator.grants import AuthStore
from tenant_events.simulator.keys import load_or_create_key
from tenant_events.simulator.scenarios import ScenarioPlayer, Step, load_scenario
from tenant_events.simulator.storage import SimStore
from tenant_events.simulator.tokens import TokenService

DB_FILE = "simulator.sqlite3"


@dataclass
class RateWindow:
    """A fixed window counter per client (docs/event-stream.md "Limits": request rate limited, 429 past it)."""

    started: float
    count: int = 0


@dataclass
class Counters:
    connections: int = 0
    connections_total: int = 0
    requests: int = 0
    status: dict[int, int] = field(default_factory=dict)


class SimState:
    def __init__(self, config: SimulatorConfig) -> None:
        self.config = config
        self.store = SimStore(config.data_dir / DB_FILE if config.data_dir else None)
        self.log = EventLog(config, self.store)
        self.activity = Activity(config, self.log)
        self.scenario: list[Step] = load_scenario(config.scenario) if config.scenario else []
        self.player = ScenarioPlayer(self.activity)
        self.clients = ClientRegistry(self.store)
        self.key = load_or_create_key(config.data_dir)
        self.faults = Faults()
        self.auth = AuthStore(self.store)
        self.counters = Counters()
        self.rate_windows: dict[str, RateWindow] = {}
        self.auth_url = ""  # set once the port is known
        self.tokens: TokenService | None = None
        self.streams: set[asyncio.Task[None]] = set()

    def bind(self, auth_url: str) -> None:
        """Fix the URLs (issuer, audience) once the listening port is known."""
        self.auth_url = auth_url
        self.tokens = TokenService(
            self.key, issuer=auth_url + "/", audience=self.base_url + "/", clients=self.clients
        )

    @property
    def base_url(self) -> str:
        return self.auth_url + "/api/v2"

    @property
    def token_service(self) -> TokenService:
        if self.tokens is None:
            raise RuntimeError("simulator URLs are not bound yet")
        return self.tokens

    def rate_check(self, client_id: str) -> tuple[bool, dict[str, str]]:
        """Count one request; (allowed, the X-RateLimit-* headers to send)."""
        cfg, now = self.config, time.time()
        window = self.rate_windows.get(client_id)
        if window is None or now - window.started >= cfg.rate_window:
            window = self.rate_windows[client_id] = RateWindow(now)
        window.count += 1
        allowed = window.count <= cfg.rate_limit
        reset = int(window.started + cfg.rate_window) + 1
        headers = {
            "X-RateLimit-Limit": str(cfg.rate_limit),
            "X-RateLimit-Remaining": str(max(0, cfg.rate_limit - window.count)),
            "X-RateLimit-Reset": str(reset),
        }
        if not allowed:
            headers["Retry-After"] = str(max(1, reset - int(now)))
        return allowed, headers

    def end_streams(self) -> None:
        """Ask every open event stream to end (server shutdown)."""
        for task in list(self.streams):
            task.cancel()

    def close(self) -> None:
        self.log.flush()
        self.store.close()
