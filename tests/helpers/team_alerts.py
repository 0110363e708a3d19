"""Shared pieces of the team-alert tests: a relay with --alerts-to a JSON webhook (pytest-httpserver through
Apprise's json:// URL, saved in the real keyring), the rule that raises one alert per created group, and what
the receiver saw."""

from __future__ import annotations

import asyncio
import sqlite3
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
            logs = "\n---\n".join(p.report() for p in procs)
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


def settled(db: Path, events: int, kind: str = "group.created") -> bool:
    """The relay's team database holds `events` events of type `kind`, has evaluated all it stores, and its
    outbox has nothing left to route or send."""
    if not db.exists():
        return False
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1.0)
    except sqlite3.Error:
        return False
    try:
        stored = conn.execute("SELECT count(*) FROM events WHERE type = ?", (kind,)).fetchone()[0]
        newest = conn.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()[0]
        found = conn.execute("SELECT value FROM counters WHERE name = 'alerts_upto'").fetchone()
        if found is None:  # the schema is being set up: its counters come in a later transaction
            return False
        upto = found[0]
        unrouted = conn.execute("SELECT count(*) FROM alert_outbox WHERE routed = 0").fetchone()[0]
        pending = conn.execute("SELECT count(*) FROM alert_deliveries WHERE state = 'pending'").fetchone()[0]
        routed = conn.execute("SELECT count(*) FROM alert_outbox").fetchone()[0]
    except sqlite3.Error:  # being created
        return False
    finally:
        conn.close()
    return stored >= events and upto >= newest and routed > 0 and unrouted == 0 and pending == 0


@contextmanager
def two_relays(
    make_simulator,
    hub,
    tmp_path,
    httpserver,
    catch_up_minutes: float | None = None,
    rules: list[dict] = RULES,
):
    """A simulator, a receiver and two relays delivering to it (with `catch_up_minutes` and `rules` in their
    settings), the first holding the lease and evaluating; every relay still running is stopped afterwards."""
    sim = make_simulator(heartbeat=0.2, rate=0)
    token = sim.mint_token(ttl=3600)
    receiver = Receiver(httpserver)
    dirs = [tmp_path / "relay-a", tmp_path / "relay-b"]
    with team_destination(dirs, receiver.url, rules) as name:
        for data in dirs if catch_up_minutes is not None else ():
            paths = AppPaths.resolve(str(data))
            settings = load_settings(paths)
            settings.alerts.catch_up_after_minutes = catch_up_minutes
            save_settings(paths, settings)
        relays = [relay(sim, hub, token, d, name) for d in dirs]
        try:
            first = leader(relays)
            standby = next(r for r in relays if r is not first)
            first.wait_for("alerts: evaluating the team's alerts")
            standby.wait_for("standby: the lease is held by")
            yield sim, receiver, dirs, relays
        finally:
            for r in relays:
                if r.proc.poll() is None:
                    r.stop()


def take_over(
    relays, dirs, groups: int, before=lambda: None, *, kind: str = "group.created", stop: bool = True
) -> tuple[HubCli, Path]:
    """Kill whichever relay leads now (after `before()`); the other takes over and settles its evaluation and
    outbox (`groups` events of type `kind`): that relay, stopped unless `stop` is False, and its team
    database."""
    first = leader(relays)  # (a loaded machine may have handed the lease over since the start)
    standby = next(r for r in relays if r is not first)
    before()
    terms = standby.count("leader: holds the lease")
    first.kill()
    standby.wait_for("leader: holds the lease", times=terms + 1, timeout=30)
    survivor = dirs[relays.index(standby)] / "tenants" / "acme-team.sqlite3"
    wait_until(lambda: settled(survivor, groups, kind), "the new leader's evaluation and outbox", relays)
    if stop:
        assert standby.stop() == 0, standby.text()
    return standby, survivor


def team_payload(first_event_id: str) -> dict[str, object]:
    """A team alert as the relay publishes it on the hub: the group rule's, raised by event `first_event_id`."""
    return {
        "key": f"each-group.{first_event_id}",
        "version": 1,
        "rule": "each-group",
        "rule_name": "Group created",
        "severity": "critical",
        "tenant": "acme",
        "catch_up": False,
        "occurrences": 1,
        "count": 1,
        "first_event_id": first_event_id,
        "last_event_id": first_event_id,
        "first_event_time": "2026-11-01T10:00:00.000Z",
        "last_event_time": "2026-11-01T10:00:00.000Z",
        "types": {"group.created": 1},
        "detail": "Admins created",
        "raised_at": 1_793_527_200.0,
        "updated_at": 1_793_527_200.0,
        "hub_tenant": "acme",
    }
