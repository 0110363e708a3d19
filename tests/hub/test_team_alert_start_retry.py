"""A lease-holding relay whose start of the team's alerts fails (the hub answers its request too late, as a
loaded machine's hub does) starts them again while it holds the lease, and delivers each alert once when the
hub answers again: the failure is said once, and the recovery too. A real nats-server behind a hop that loses
the relay's requests for the team's evaluation state while muted; a JSON webhook (Apprise) receives."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from helpers.nats_mute_hop import MuteHop
from helpers.team_alerts import Receiver, relay, settled, team_destination, wait_until
from tenant_events.hub.eval_state import eval_bucket
from tenant_events.hub.subjects import HubNames

REAL = os.environ.get("TENANT_EVENTS_REAL_KEYRING") == "1"
pytestmark = [
    pytest.mark.hub,
    pytest.mark.dbus,
    pytest.mark.skipif(not REAL, reason="needs ./run test (gnome-keyring on D-Bus)"),
]
GROUPS = 6
STATE_INFO = f"$JS.API.STREAM.INFO.KV_{eval_bucket(HubNames('acme'))}"  # the start's read of the state bucket


def test_a_leader_whose_alert_start_timed_out_starts_again_and_delivers_each_alert_once(
    make_simulator, nats_single, tmp_path, httpserver
):
    sim = make_simulator(heartbeat=0.2, rate=0)
    token = sim.mint_token(ttl=3600)
    receiver = Receiver(httpserver)
    data = tmp_path / "relay"
    with team_destination([data], receiver.url) as name, MuteHop(nats_single.urls, STATE_INFO) as hop:
        slow_hub = SimpleNamespace(urls=hop.url, credentials=nats_single.credentials)
        proc = relay(sim, slow_hub, token, data, name)
        try:
            proc.wait_for("leader: holds the lease")
            proc.wait_for("alerts: the team's alerts stopped", timeout=60)
            sim.emit(GROUPS, ["group.created"])
            wait_until(lambda: hop.dropped >= 2, "a second start that timed out", [proc], timeout=60)
            assert receiver.keys == []  # nothing is evaluated while the start fails
            hop.unmute()
            proc.wait_for("alerts: evaluating the team's alerts again", timeout=90)
            wait_until(
                lambda: len(receiver.distinct()) >= GROUPS, "every alert delivered", [proc], timeout=60
            )
            team = data / "tenants" / "acme-team.sqlite3"
            wait_until(lambda: settled(team, GROUPS), "the relay's evaluation and outbox", [proc])
            assert proc.stop() == 0, proc.report()
        finally:
            if proc.proc.poll() is None:
                proc.stop()
    assert len(receiver.keys) == GROUPS, receiver.keys  # each alert once
    assert len(receiver.distinct()) == GROUPS
    said = [line for line in proc.lines if "the team's alerts stopped" in line]
    assert said == [
        "tenant-events: alerts: the team's alerts stopped (the hub did not answer in time); "
        "trying again every 30 s at most"
    ], proc.text()
    assert proc.count("leader: holds the lease") == 1  # the lease was kept all along
