"""The proving ground's team-hub scenario (bench/proving_ground.py --only hub): see that script's docstring."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from proving_rows import Row

STALL = 1.0  # the CLI's --stall-timeout, as in every proving-ground scenario


def leader_index(relays: list[Any]) -> int:
    """Which relay streams now (waiting while the first one starts)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        leading = [
            i
            for i, r in enumerate(relays)
            if r.proc.poll() is None and r.count("leader: holds") > r.count("standby: lost")
        ]
        if len(leading) == 1:
            return leading[0]
        time.sleep(0.05)
    raise RuntimeError("no single relay streams: " + " | ".join(r.text()[-300:] for r in relays))


def hub(
    work: Path, rounds: int, seed: int, account: Callable[[Row, Any, Path], Row], count: Callable[[Path], int]
) -> Row:
    """The hub row: relays killed in turn, the standby taking over, the viewer's export counted at the end."""
    # tests/ is on sys.path once proving_ground.py runs
    from helpers.fixtures_engine import OLD
    from helpers.hub_cli import HubCli
    from helpers.nats_hub import start_cluster
    from tenant_events.simulator.testing import start_simulator

    rng = random.Random(seed)
    cluster = start_cluster(work / "nats")
    sim = start_simulator(
        backlog=2000, heartbeat=0.1, rotate_after=0.7, rate=40, burst_every=0, max_connections=1
    )
    token, pw = sim.mint_token(ttl=24 * 3600), cluster.credentials
    # (acme: the tenant packaging/nats/accounts.conf pins its viewers to)
    common = ["--hub", cluster.urls, "--hub-tenant", "acme", "--name", "pg"]

    def relay(data: Path) -> HubCli:
        return HubCli(
            "relay",
            "--base-url",
            sim.base_url,
            "--data-dir",
            str(data),
            "--from-timestamp",
            OLD,
            "--stall-timeout",
            str(STALL),
            "--hub-user",
            "collector",
            "--lease-seconds",
            "2",
            *common,
            env={"TENANT_EVENTS_ACCESS_TOKEN": token, "TENANT_EVENTS_HUB_PASSWORD": pw.collector},
        )

    def viewer() -> HubCli:
        return HubCli(
            "stream",
            "--data-dir",
            str(work / "viewer"),
            "--hub-user",
            "viewer",
            *common,
            env={"TENANT_EVENTS_HUB_PASSWORD": pw.viewer},
        )

    row, db = Row("hub", rounds), work / "viewer" / "tenants" / "pg.sqlite3"
    relays, reader = [relay(work / "relay-a"), relay(work / "relay-b")], viewer()
    try:
        for i in range(rounds):
            time.sleep(rng.uniform(0.5, 2.0))
            started = time.monotonic()
            if i % 3 == 2:  # the viewer
                reader.kill()
                reader = viewer()
                reader.wait_for("tenant-events: live")
            else:
                index = leader_index(relays)
                relays[index].kill()
                standby = relays[1 - index]
                standby.wait_for("leader: holds", times=standby.count("leader: holds") + 1, timeout=30)
                relays[index] = relay(work / f"relay-{i}")
            row.recovery.append(time.monotonic() - started)
        sim.faults(paused=True)  # live events stop: the viewer must end up with every one
        total, deadline = int(sim.stats()["events"]), time.monotonic() + 60
        while count(db) < total and time.monotonic() < deadline:
            time.sleep(0.05)
        if any("too many" in r.text() for r in relays):
            raise RuntimeError("a second relay connected to the tenant while the first one streamed")
    finally:
        for proc in [*relays, reader]:
            if proc.proc.poll() is None:
                proc.stop()
        cluster.stop()
    try:
        return account(row, sim, db)
    finally:
        sim.stop()
