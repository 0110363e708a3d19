"""Test API: run the real simulator (Starlette app under uvicorn) in a background thread on 127.0.0.1:0.

    with running_simulator(seed=7, backlog=100) as sim:
        token = sim.mint_token()
        httpx.get(sim.base_url + "/events", headers={"Authorization": f"Bearer {token}"}) ...

Defaults differ from the CLI's where tests need determinism and speed (TEST_DEFAULTS): no live events
(`rate=0`; use `.emit()`), 1 s heartbeats, no rotation. Every CLI option can be passed by name.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from tenant_events.simulator.clients import DEMO_CLIENT_ID, NONGLOBAL_CLIENT_ID, SERVICE_CLIENT_ID
from tenant_events.simulator.config import SimulatorConfig
from tenant_events.simulator.server import SimulatorServer

TEST_DEFAULTS: dict[str, Any] = {
    "rate": 0.0,
    "burst_every": 0.0,
    "heartbeat": 1.0,
    "keepalive": 5.0,
    "rotate_after": 0.0,
}


@dataclass
class SimulatorHandle:
    """A simulator running in this process: its URLs, client ids and a control client for its fault knobs."""

    auth_url: str
    config: SimulatorConfig
    _server: SimulatorServer = field(repr=False)
    _thread: threading.Thread = field(repr=False)
    demo_client_id: str = DEMO_CLIENT_ID
    service_client_id: str = SERVICE_CLIENT_ID
    _client: httpx.Client | None = field(default=None, repr=False)

    @property
    def base_url(self) -> str:
        return self.auth_url + "/api/v2"

    @property
    def issuer(self) -> str:
        return self.auth_url + "/"

    @property
    def audience(self) -> str:
        return self.base_url + "/"

    @property
    def events_url(self) -> str:
        return self.base_url + "/events"

    @property
    def service_client_secret(self) -> str:
        client = self._server.state.clients.get(SERVICE_CLIENT_ID)
        assert client is not None and client.secret is not None
        return client.secret

    def client_secret(self, client_id: str) -> str:
        """The secret of any confidential client (`tenant-events-nonglobal`, `tenant-events-noscope`, ...)."""
        client = self._server.state.clients.get(client_id)
        if client is None or client.secret is None:
            raise KeyError(f"no confidential client {client_id!r}")
        return client.secret

    def mint_token(
        self,
        scope: str = "read:events",
        global_client: bool = True,
        ttl: int = 300,
        *,
        client_id: str | None = None,
        audience: str | None = None,
    ) -> str:
        """An RS256 access token signed by this simulator (ttl may be negative: already expired)."""
        cid = client_id or (SERVICE_CLIENT_ID if global_client else NONGLOBAL_CLIENT_ID)
        return self._server.state.token_service.mint_access(
            client_id=cid, sub=f"{cid}@clients", scope=scope, ttl=ttl, audience=audience
        )

    def _admin(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        if self._client is None:  # one client per handle: building one costs ~50 ms (TLS context)
            # no kept-alive connection: one the server closes as idle just as a request reuses it ends in
            # "connection reset" (seen on a loaded machine); a local connection costs well under a millisecond
            self._client = httpx.Client(
                base_url=self.auth_url, timeout=30, limits=httpx.Limits(max_keepalive_connections=0)
            )
        response = self._client.request(method, path, json=body)
        if response.status_code != 200:
            raise ValueError(f"{path}: {response.status_code} {response.text}")
        return response.json()

    def faults(self, **knobs: Any) -> dict[str, Any]:
        """Set fault knobs (faults.Faults fields, id_token_*, paused, reset=True); returns all knobs."""
        result: dict[str, Any] = self._admin("POST", "/_sim/faults", knobs)
        return result

    def emit(self, n: int, types: list[str] | tuple[str, ...] | None = None) -> int:
        """Append n events now (optionally only of `types`); returns n."""
        body: dict[str, Any] = {"n": n}
        if types:
            body["types"] = list(types)
        return int(self._admin("POST", "/_sim/emit", body)["emitted"])

    def scenario(self, do: str, **options: Any) -> dict[str, Any]:
        """Run one scenario step now (scenarios.py), e.g. `scenario("admin_grant", to="group")`."""
        result: dict[str, Any] = self._admin("POST", "/_sim/scenario", {"do": do, **options})
        return result

    def stats(self) -> dict[str, Any]:
        result: dict[str, Any] = self._admin("GET", "/_sim/stats")
        return result

    def latest_offset(self) -> str:
        return str(self.stats()["latest_offset"])

    def stop(self) -> None:
        # Live traffic first: at a high speed its loop keeps the server's event loop busy, and on a loaded machine
        # uvicorn's shutdown waited behind it past the limit below (a bool the loop reads: safe across threads).
        self._server.state.activity.paused = True
        if self._client is not None:
            self._client.close()
            self._client = None
        self._server.request_stop()
        self._thread.join(timeout=15)
        if self._thread.is_alive():
            raise RuntimeError("simulator thread did not stop within 15 s")


def start_simulator(**options: Any) -> SimulatorHandle:
    """Start a simulator thread and wait until it listens; call `.stop()` when done."""
    config = SimulatorConfig().with_options(**{**TEST_DEFAULTS, **options})
    server = SimulatorServer(config)
    failure: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(server.serve())
        except BaseException as exc:  # reported to the starting thread
            failure.append(exc)

    thread = threading.Thread(target=run, name=f"simulator:{server.port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if failure or not thread.is_alive():
            raise RuntimeError("simulator failed to start") from (failure[0] if failure else None)
        if time.monotonic() > deadline:
            server.request_stop()
            raise RuntimeError("simulator did not start within 30 s")
        time.sleep(0.01)
    return SimulatorHandle(auth_url=server.auth_url, config=config, _server=server, _thread=thread)


@contextlib.contextmanager
def running_simulator(**options: Any) -> Iterator[SimulatorHandle]:
    handle = start_simulator(**options)
    try:
        yield handle
    finally:
        handle.stop()
