"""A team alert keeps its versions through a takeover, on a 3-node JetStream cluster (packaging/nats/
cluster.conf): two relays with --alerts-to the same JSON webhook (pytest-httpserver through Apprise), one rule
whose firings fold into one alert. The leader delivers versions 1 to 3 and is SIGKILLed; the standby takes the
lease, goes on from the team's evaluation state on the hub (hub/eval_state.py) instead of evaluating the stream
again from its start, and delivers versions 4 and 5 of the same alert. Each version reaches the de-duplicating
receiver once. (Seen in use: the new leader rebuilt every alert as version 1 and, finding version 1 delivered by
the old one, delivered nothing for the firings after the takeover.)"""

from __future__ import annotations

import os

import pytest

from helpers.team_alerts import Receiver, leader, marked, relay, team_destination, wait_until
from tenant_events.hub.team_alerts import team_dedup_key
from tenant_events.store.alerts_inbox import AlertInbox

REAL = os.environ.get("TENANT_EVENTS_REAL_KEYRING") == "1"
pytestmark = [
    pytest.mark.hub,
    pytest.mark.dbus,
    pytest.mark.skipif(not REAL, reason="needs ./run test (gnome-keyring on D-Bus)"),
]
ONE_ALERT = [
    {"id": "off-hours", "enabled": False},
    {
        "id": "groups",
        "name": "Groups created",
        "types": ["group.created"],
        "severity": "critical",
        "coalesce_minutes": 60,  # every group created within the hour is a firing of the same alert
    },
]


def test_versions_one_to_five_each_reach_the_receiver_once_through_a_sigkilled_leader(
    make_simulator, nats_cluster, tmp_path, httpserver
):
    sim = make_simulator(heartbeat=0.2, rate=0)
    token = sim.mint_token(ttl=3600)
    receiver = Receiver(httpserver)
    dirs = [tmp_path / "relay-a", tmp_path / "relay-b"]
    with team_destination(dirs, receiver.url, ONE_ALERT) as name:
        relays = [relay(sim, nats_cluster, token, d, name) for d in dirs]
        try:
            first = leader(relays)
            standby = next(r for r in relays if r is not first)
            standby.wait_for("standby: the lease is held by")
            first.wait_for("alerts: evaluating the team's alerts")
            wait_until(lambda: marked(nats_cluster), "the relay's mark on the hub", relays)
            for version in (1, 2, 3):
                sim.emit(1, ["group.created"])
                wait_until(lambda v=version: len(receiver.keys) >= v, f"version {version} delivered", relays)
            first.kill()
            standby.wait_for("leader: holds the lease", timeout=30)
            standby.wait_for("going on from the team's evaluation: 1 alerts")
            for version in (4, 5):
                sim.emit(1, ["group.created"])
                wait_until(
                    lambda v=version: len(receiver.distinct()) >= v,
                    f"version {version} delivered",
                    relays,
                    60,
                )
            code = standby.stop()
        finally:
            for r in relays:
                if r.proc.poll() is None:
                    r.stop()
    assert code == 0, standby.text()
    survivor = dirs[relays.index(standby)] / "tenants" / "acme-team.sqlite3"
    with AlertInbox(survivor) as inbox:
        [alert] = inbox.alerts()
    assert (alert.occurrences, alert.event_count) == (5, 5)
    key = f"groups.{alert.first_event_id}"
    assert receiver.keys == [team_dedup_key("acme", key, v) for v in range(1, 6)]  # each once, in order
    assert {b["alert_key"] for b in receiver.bodies} == {f"tenant-events:acme:{key}"}  # one incident
