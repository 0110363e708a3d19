"""The team hub under failure: a 3-node JetStream cluster (real nats-server processes, packaging/nats/
cluster.conf), two collectors and three viewers against the real simulator. The streaming collector is
SIGKILLed mid-stream and the standby takes over; the killed one restarts as the standby; one NATS node stops
and comes back; the new leader is killed and the lease moves back. Afterwards every viewer's export equals the
simulator's event log: nothing lost, nothing twice, in order — and the tenant never saw two connections at once
(the simulator allows one: a second would be refused with 403, which the relays would report)."""

from __future__ import annotations

import asyncio
import threading
import time

import nats
import pytest

from helpers.fixtures_engine import reference_ids
from helpers.hub_cli import HubCli, export_ids, wait_stored
from helpers.hub_cli import relay as hub_relay
from helpers.slack import bound

pytestmark = pytest.mark.hub

# Live events all along (40/s) on top of a backlog, so every kill and the node's stop land mid-stream.
SIM = {
    "backlog": 1500,
    "heartbeat": 0.2,
    "rotate_after": 2.0,
    "rate": 40,
    "burst_every": 0,
    "max_connections": 1,
}
LEASE = f"{bound(2):g}"  # seconds: a standby takes over about this long after the leader died (stretched for load)


def relay(sim, hub, token: str, data_dir) -> HubCli:
    return hub_relay(sim, hub, token, data_dir, lease=LEASE)


def viewer(hub, data_dir) -> HubCli:
    return HubCli(
        "stream",
        "--hub",
        hub.urls,
        "--hub-tenant",
        "acme",
        "--name",
        "acme",
        "--data-dir",
        str(data_dir),
        "--hub-user",
        "viewer",
        env={"TENANT_EVENTS_HUB_PASSWORD": hub.credentials.viewer},
    )


class ConnectionWatch:
    """Samples the simulator's open stream count while the scenario runs (the 403 check is the hard one)."""

    def __init__(self, sim) -> None:
        self.sim, self.most = sim, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            self.most = max(self.most, int(self.sim.stats()["connections"]))

    def stop(self) -> int:
        self._stop.set()
        self._thread.join(5)
        return self.most


def leader_of(relays: list[HubCli]) -> HubCli:
    deadline = time.monotonic() + bound(30)
    while time.monotonic() < deadline:
        live = [r for r in relays if r.proc.poll() is None]
        leaders = [r for r in live if r.count("leader: holds the lease") > r.count("standby: lost the lease")]
        if len(leaders) == 1:
            return leaders[0]
        time.sleep(0.05)
    raise AssertionError("no single leader:\n" + "\n---\n".join(r.text()[-1500:] for r in relays))


def stream_leader(hub) -> str:
    """The node that leads the tenant's stream now (the one whose loss forces an election)."""

    async def ask() -> str:
        nc = await nats.connect(
            hub.urls.split(","),
            user="collector",
            password=hub.credentials.collector,
            inbox_prefix="_INBOX_collector",
        )
        try:
            info = await nc.jetstream().stream_info("TENANT_EVENTS_ACME")
        finally:
            await nc.close()
        assert info.cluster is not None and info.cluster.leader
        return info.cluster.leader

    return asyncio.run(ask())


def test_failover_and_a_node_outage_keep_every_viewer_exact(make_simulator, nats_cluster, tmp_path):
    sim = make_simulator(**SIM)
    sim.faults(duplicate_every=9)  # the tenant re-sends some events: each is still stored once everywhere
    token = sim.mint_token(ttl=3600)
    hub = nats_cluster
    viewers = [viewer(hub, tmp_path / f"viewer-{i}") for i in range(3)]
    dbs = [tmp_path / f"viewer-{i}" / "tenants" / "acme.sqlite3" for i in range(3)]
    relays = [relay(sim, hub, token, tmp_path / "relay-a"), relay(sim, hub, token, tmp_path / "relay-b")]
    watch = ConnectionWatch(sim)
    try:
        first = leader_of(relays)
        standby = next(r for r in relays if r is not first)
        standby.wait_for("standby: the lease is held by")
        for db, v in zip(dbs, viewers, strict=True):
            wait_stored(db, 1000, who=v)  # the viewers mid-catch-up, the leader streaming live events

        first.kill()  # SIGKILL mid-stream: its lease lapses by itself
        killed_at = time.monotonic()
        standby.wait_for("leader: holds the lease", timeout=20)
        took_over = time.monotonic() - killed_at
        assert took_over < 2 * float(LEASE) + 3, f"the standby took {took_over:.1f} s"
        relays.append(relay(sim, hub, token, tmp_path / "relay-a"))  # the killed one comes back: a standby
        relays[-1].wait_for("standby: the lease is held by")

        node = next(n for n in hub.nodes if n.name == stream_leader(hub))
        node.stop()  # the stream's leader: an election mid-stream; clients on it move to another node
        time.sleep(2.0)
        node.start()
        node.wait_healthy(30)
        time.sleep(1.0)

        second = leader_of(relays)
        second.kill()  # the lease moves back to the restarted collector
        relays[-1].wait_for("leader: holds the lease", timeout=20)
        time.sleep(1.0)
        sim.faults(paused=True)  # live events stop: the count below is the whole log
        total = int(sim.stats()["events"])
        for db, v in zip(dbs, viewers, strict=True):
            wait_stored(db, total, who=v)
    finally:
        most = watch.stop()
        codes = [r.stop() for r in relays if r.proc.poll() is None]
        codes += [v.stop() for v in viewers]
    logs = "\n---\n".join(r.text()[-2000:] for r in relays)
    assert all(code == 0 for code in codes), logs
    assert "too many" not in logs, logs  # never a second tenant connection while the first was open
    assert most <= 1, f"{most} tenant connections at once"
    for node in hub.nodes:  # the hub itself stayed healthy: no replica gave up applying what the relays sent
        text = node.log.read_text()
        assert "critical write error" not in text and "NO quorum" not in text, text[-3000:]
    reference = reference_ids(sim, total)
    assert len(reference) == total
    for i in range(3):
        ids = export_ids(tmp_path / f"viewer-{i}")
        assert len(ids) == len(set(ids)), f"viewer {i} stored an event twice"
        assert ids == reference, f"viewer {i}: {len(set(reference) - set(ids))} lost, or out of order"
    print(f"{total} events; the standby took over {took_over:.1f} s after the leader's SIGKILL")
