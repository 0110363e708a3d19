"""Shared pieces of the team-alert tests: a relay with --alerts-to a JSON webhook (pytest-httpserver through
Apprise's json:// URL, saved in the real keyring), the rule that raises one alert per created group, and what
the receiver saw."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson
from werkzeug import Request, Response

from helpers.hub_cli import HubCli
from helpers.hub_cli import relay as hub_relay
from helpers.slack import bound
from tenant_events.destinations.registry import make_destination, save_destination, slot
from tenant_events.hub.connection import HubAuth, HubOptions, connect
from tenant_events.hub.subjects import HubNames
from tenant_events.hub.team_alerts import team_evaluates
from tenant_events.paths import AppPaths
from tenant_events.settings import load_settings, save_settings
from tenant_events.store.team_alert_rows import team_alert_ids
from tenant_events.tenant.sign_in import open_secret_store

RULES = [
    {"id": "off-hours", "enabled": False},
    {
        "id": "each-group",
        "name": "Group created",
        "types": ["group.created"],
        "severity": "critical",
        "coalesce_minutes": 0,
    },
]


class Receiver:
    """A JSON webhook that records the dedup key of each request it answers 200 (after `delay` seconds)."""

    def __init__(self, httpserver, delay: float = 0.0) -> None:
        self.keys: list[str] = []
        self.bodies: list[dict[str, object]] = []
        self.delay = delay
        self._lock = threading.Lock()
        httpserver.expect_request("/hook", method="POST").respond_with_handler(self._answer)
        self.url = f"json://127.0.0.1:{httpserver.port}/hook"

    def _answer(self, request: Request) -> Response:
        time.sleep(self.delay)
        with self._lock:
            self.keys.append(request.headers["Idempotency-Key"])
            self.bodies.append(orjson.loads(request.get_data()))
        return Response("ok")

    def distinct(self) -> set[str]:
        with self._lock:
            return set(self.keys)


@contextmanager
def team_destination(data_dirs: list[Path], url: str, rules: list[dict] = RULES) -> Iterator[str]:
    """One destination, saved (the same name and URL) in each relay's data dir, with `rules` (the group rule);
    the keyring entry is removed afterwards."""
    name = f"team-{uuid.uuid4().hex[:8]}"
    store = open_secret_store().store
    for data in data_dirs:
        paths = AppPaths.resolve(str(data)).ensure()
        save_destination(paths, store, make_destination(name, url, severities=["critical"]), url)
        settings = load_settings(paths)
        settings.alerts.rules = list(rules)
        save_settings(paths, settings)
    try:
        yield name
    finally:
        for data in data_dirs:
            store.delete(slot(AppPaths.resolve(str(data)), name))


def relay(sim, hub, token: str, data_dir: Path, destination: str, lease: str | None = None) -> HubCli:
    return hub_relay(sim, hub, token, data_dir, lease=lease, alerts_to=destination)


def wait_until(check, what: str, procs: list[HubCli], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + bound(timeout)
    while not check():
        if time.monotonic() > deadline:
            logs = "\n---\n".join(p.text()[-2500:] for p in procs)
            raise AssertionError(f"timed out after {timeout} s waiting for {what}:\n{logs}")
        time.sleep(0.05)


def leader(relays: list[HubCli]) -> HubCli:
    """The one relay that holds the lease (after waiting for there to be one)."""

    def holds(r: HubCli) -> bool:
        return r.proc.poll() is None and r.count("leader: holds the lease") > r.count(
            "standby: lost the lease"
        )

    wait_until(lambda: sum(holds(r) for r in relays) == 1, "one leader", relays, timeout=30)
    return next(r for r in relays if holds(r))


def with_rules(data) -> None:
    paths = AppPaths.resolve(str(data)).ensure()
    settings = load_settings(paths)
    settings.alerts.rules = list(RULES)
    save_settings(paths, settings)


def viewer(hub, data) -> HubCli:
    return HubCli(
        "stream",
        "--hub",
        hub.urls,
        "--hub-tenant",
        "acme",
        "--name",
        "acme",
        "--data-dir",
        str(data),
        "--hub-user",
        "viewer",
        env={"TENANT_EVENTS_HUB_PASSWORD": hub.credentials.viewer},
    )


def team_ids(data) -> set[int]:
    path = data if str(data).endswith(".sqlite3") else data / "tenants" / "acme.sqlite3"
    return team_alert_ids(path) if path.exists() else set()


def marked(hub) -> bool:
    async def ask() -> bool:
        nc = await connect(_viewer_options(hub), reconnect=False)
        try:
            return await team_evaluates(nc.jetstream(timeout=5.0), HubNames("acme"))
        except Exception:
            return False
        finally:
            await nc.close()

    return asyncio.run(ask())


def _viewer_options(hub) -> HubOptions:
    return HubOptions(tuple(hub.urls.split(",")), HubAuth("password", "viewer", hub.credentials.viewer))
