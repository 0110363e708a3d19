"""Takeover mid-delivery on a 3-node JetStream cluster (packaging/nats/cluster.conf): two relays with
--alerts-to the same JSON webhook (pytest-httpserver through Apprise). The lease holder is SIGKILLed while it
is delivering; the standby takes the lease, evaluates the same events itself, finds in the hub's outbox bucket
what its predecessor delivered and sends the rest. Every alert arrives, each under one dedup key, none lost;
only the send in flight at the kill may arrive twice — with the same key, so a de-duplicating receiver sees it
once. A relay that takes over late — after the events have grown older than the catch-up age — judges their age
when the hub stored them, as its predecessor did: it raises the same alerts under the same names, not one catch-up
summary under a new dedup key, and sends nothing again."""

from __future__ import annotations

import asyncio
import collections
import os
import time

import pytest

from helpers.hostile_viewer import hostile
from helpers.team_alerts import (
    Receiver,
    leader,
    marked,
    relay,
    settled,
    take_over,
    team_destination,
    team_ids,
    two_relays,
    viewer,
    wait_until,
    with_rules,
)
from tenant_events.hub.connection import HubAuth, HubOptions
from tenant_events.hub.subjects import HubNames
from tenant_events.hub.team_alerts import outbox_bucket, team_dedup_key
from tenant_events.hub.triage import triage_bucket
from tenant_events.store.alerts_inbox import AlertInbox
from tenant_events.tenant.team_triage import start_mirror
from tenant_events.url_forms import team_alert_link

REAL = os.environ.get("TENANT_EVENTS_REAL_KEYRING") == "1"
pytestmark = [
    pytest.mark.hub,
    pytest.mark.dbus,
    pytest.mark.skipif(not REAL, reason="needs ./run test (gnome-keyring on D-Bus)"),
]
GROUPS = 12
CATCH_UP_MINUTES = 0.1  # events older than 6 s when evaluated would be a catch-up


@pytest.mark.expect_warning_logs  # the receiver's server logs the killed relay's broken connection
def test_sigkilled_lease_holder_mid_delivery_the_standby_delivers_the_rest_under_the_same_keys(
    make_simulator, nats_cluster, tmp_path, httpserver
):
    sim = make_simulator(heartbeat=0.2, rate=0)
    token = sim.mint_token(ttl=3600)
    receiver = Receiver(httpserver, delay=0.4)  # slow enough that the kill lands mid-delivery
    dirs = [tmp_path / "relay-a", tmp_path / "relay-b"]
    seen = tmp_path / "viewer"
    with team_destination(dirs, receiver.url) as name:
        relays = [relay(sim, nats_cluster, token, d, name) for d in dirs]
        with_rules(seen)
        procs = list(relays)
        try:
            first = leader(relays)
            standby = next(r for r in relays if r is not first)
            standby.wait_for("standby: the lease is held by")
            first.wait_for("alerts: evaluating the team's alerts")
            wait_until(lambda: marked(nats_cluster), "the relay's mark on the hub", relays)
            procs.append(viewer(nats_cluster, seen))
            procs[-1].wait_for("showing the team's alerts")
            sim.emit(GROUPS, ["group.created"])
            wait_until(lambda: len(receiver.keys) >= 3, "the first deliveries", relays)
            first.kill()
            assert len(receiver.distinct()) < GROUPS, (
                "every alert went out before the kill: nothing was tested"
            )
            standby.wait_for("leader: holds the lease", timeout=30)
            wait_until(
                lambda: len(receiver.distinct()) >= GROUPS, "every alert delivered", relays, timeout=90
            )
            wait_until(lambda: len(team_ids(seen)) >= GROUPS, "the viewer's team alerts", procs, timeout=60)
            code = standby.stop()
        finally:
            for r in procs:
                if r.proc.poll() is None:
                    r.stop()
    assert code == 0, standby.text()
    survivor = dirs[relays.index(standby)]
    with AlertInbox(survivor / "tenants" / "acme-team.sqlite3") as inbox:
        stored = inbox.alerts()
    assert len(stored) == GROUPS
    expected = {team_dedup_key("acme", f"each-group.{a.first_event_id}", 1) for a in stored}
    assert receiver.distinct() == expected  # none lost, each alert under one key, the same from both relays
    # each link opens its alert in any teammate's app: by its name on the hub, not a relay's own alert id
    named = {team_alert_link("acme", f"each-group.{a.first_event_id}") for a in stored}
    assert {str(body["link"]) for body in receiver.bodies} == named
    repeats = {k: n for k, n in collections.Counter(receiver.keys).items() if n > 1}
    assert sum(repeats.values()) - len(repeats) <= 1, repeats  # at most the send in flight at the kill
    # the viewer shows each team alert once, though both relays published (the same names, counts and versions)
    with AlertInbox(seen / "tenants" / "acme.sqlite3") as inbox:
        shown = inbox.alerts()
    assert sorted(a.first_event_id for a in shown) == sorted(a.first_event_id for a in stored)
    assert all(a.rule_name == "Group created (team)" for a in shown)
    print(f"{len(receiver.keys)} requests for {GROUPS} alerts; repeated under the same key: {repeats}")


def test_a_relay_taking_over_after_the_catch_up_age_raises_the_same_alerts_and_sends_nothing_again(
    make_simulator, nats_single, tmp_path, httpserver
):
    groups = 5
    with two_relays(make_simulator, nats_single, tmp_path, httpserver, CATCH_UP_MINUTES) as (
        sim,
        receiver,
        dirs,
        relays,
    ):
        sim.emit(groups, ["group.created"])
        emitted = time.monotonic()
        wait_until(lambda: len(receiver.distinct()) >= groups, "the leader's deliveries", relays)
        # a kill between a send and its record may send that one again (under the same key): not this test's case
        first_db = dirs[relays.index(leader(relays))] / "tenants" / "acme-team.sqlite3"
        wait_until(lambda: settled(first_db, groups), "the leader's outbox recorded", relays)
        # the standby takes over only once every event is older than the catch-up age
        wait_until(lambda: time.monotonic() - emitted > CATCH_UP_MINUTES * 60 + 2, "the catch-up age", relays)
        _, survivor = take_over(relays, dirs, groups)
    with AlertInbox(survivor) as inbox:
        stored = inbox.alerts()
    # one live alert per group, as the first relay raised them: no catch-up summary of all five
    assert sorted((a.catch_up, a.occurrences, a.event_count) for a in stored) == [(False, 1, 1)] * groups
    expected = {team_dedup_key("acme", f"each-group.{a.first_event_id}", 1) for a in stored}
    assert receiver.distinct() == expected
    assert len(receiver.keys) == groups, receiver.keys  # the new leader sent nothing again


def _attempt_purges(hub) -> dict[str, str]:
    """A viewer (its own password, the shipped permissions) tries to wipe the relays' state: a rollup under the
    one key shape it may write, in the delivery bucket, the lease, the cursor and the triage."""
    names = HubNames("acme")

    async def go() -> dict[str, str]:
        async with hostile(hub) as ana:
            buckets = (outbox_bucket(names), names.lease_bucket, names.cursor_bucket, triage_bucket(names))
            rollup = {"Nats-Rollup": "all"}
            return {b: await ana.publish(f"$KV.{b}.x.y.viewer", b"", rollup) for b in buckets}

    return asyncio.run(go())


def test_a_takeover_after_a_viewers_attempted_purge_sends_nothing_again(
    make_simulator, nats_single, tmp_path, httpserver
):
    groups, outcomes = 5, {}
    with two_relays(make_simulator, nats_single, tmp_path, httpserver) as (sim, receiver, dirs, relays):
        sim.emit(groups, ["group.created"])
        wait_until(lambda: len(receiver.distinct()) >= groups, "the leader's deliveries", relays)
        first_db = dirs[relays.index(leader(relays))] / "tenants" / "acme-team.sqlite3"
        wait_until(lambda: settled(first_db, groups), "the leader's outbox recorded", relays)
        take_over(relays, dirs, groups, before=lambda: outcomes.update(_attempt_purges(nats_single)))
    print(outcomes)
    assert len(receiver.keys) == groups, f"sent again after {outcomes}: {receiver.keys}"
    assert "stored" not in outcomes.values(), outcomes


def test_a_teammates_resolve_after_a_takeover_reaches_the_destination_saying_who_and_why(
    make_simulator, nats_single, tmp_path, httpserver
):
    """A team alert's life ends with its resolve at the team's destination, though the relay that delivered it
    was killed: a viewer resolves it with a note (as its inbox's Resolve does, on the hub's triage), and the relay
    that took over delivers the resolve under the alert's key, saying who resolved it and why, with the link
    that opens the alert in every teammate's app."""
    hub = nats_single
    seen = tmp_path / "viewer"
    with_rules(seen)
    with two_relays(make_simulator, hub, tmp_path, httpserver) as (sim, receiver, dirs, relays):
        watching = viewer(hub, seen)
        try:
            watching.wait_for("showing the team's alerts")
            sim.emit(1, ["group.created"])
            wait_until(lambda: len(receiver.keys) >= 1, "the firing", relays)
            wait_until(lambda: len(team_ids(seen)) >= 1, "the viewer's copy", [*relays, watching])
            # a kill between the send and its record sends the firing again (under its key): not this test's case
            first_db = dirs[relays.index(leader(relays))] / "tenants" / "acme-team.sqlite3"
            wait_until(lambda: settled(first_db, 1), "the leader's outbox recorded", relays)
            take_over(relays, dirs, 1, stop=False)
            with AlertInbox(seen / "tenants" / "acme.sqlite3") as inbox:
                [mine] = inbox.alerts()
            options = HubOptions(
                tuple(hub.urls.split(",")), HubAuth("password", "viewer", hub.credentials.viewer)
            )

            async def resolve() -> None:
                mirror = await start_mirror(seen / "tenants" / "acme.sqlite3", options, "acme")
                try:
                    await mirror.publish(mine.id, "resolved", "the nightly clean-up, expected")
                finally:
                    await mirror.stop()

            asyncio.run(resolve())
            wait_until(
                lambda: any(b.get("status") == "resolved" for b in receiver.bodies), "the resolve", relays
            )
        finally:
            if watching.proc.poll() is None:
                watching.stop()
    key = f"each-group.{mine.first_event_id}"
    [firing, resolved] = receiver.bodies
    assert (firing["status"], resolved["status"]) == ("firing", "resolved")
    assert receiver.keys == [team_dedup_key("acme", key, 1), f"tenant-events:acme:{key}:resolved-1"]
    assert str(resolved["title"]).startswith("[resolved] Group created — acme")
    said = str(resolved["message"])
    assert f" · by viewer — the nightly clean-up, expected · {team_alert_link('acme', key)}" in said, said
    assert resolved["link"] == firing["link"] == team_alert_link("acme", key)
