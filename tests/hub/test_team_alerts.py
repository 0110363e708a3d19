"""The team's alerts with real services: a nats-server with the documented permissions, the simulator, a JSON
webhook (pytest-httpserver) reached through Apprise from the real keyring. The relay holding the lease evaluates
the rules once for the team, stores the alerts in its own database, delivers them under a dedup key named by the
alert's rule and first event (not a database row), and publishes them on the hub; a viewer may neither publish
an alert nor write the team's delivery state nor triage in another user's name."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import nats.errors
import orjson
import pytest

from helpers.fixtures_engine import OLD
from helpers.hub_cli import HubCli
from helpers.stream_kill import counter, stored
from helpers.team_alerts import (
    Receiver,
    marked,
    relay,
    team_destination,
    team_ids,
    viewer,
    wait_until,
    with_rules,
)
from tenant_events.hub.connection import HubAuth, HubOptions, connect
from tenant_events.hub.provision import StreamPlan, provision
from tenant_events.hub.subjects import HubNames
from tenant_events.hub.team_alerts import (
    alert_subject,
    alerts_stream,
    outbox_bucket,
    team_dedup_key,
)
from tenant_events.hub.triage import triage_bucket
from tenant_events.paths import AppPaths
from tenant_events.settings import load_settings, save_settings
from tenant_events.store.alerts_inbox import AlertInbox

REAL = os.environ.get("TENANT_EVENTS_REAL_KEYRING") == "1"
pytestmark = [
    pytest.mark.hub,
    pytest.mark.dbus,
    pytest.mark.skipif(not REAL, reason="needs ./run test (gnome-keyring on D-Bus)"),
]
NAMES = HubNames("acme")
GROUPS = 6
EACH_ORG = {
    "id": "each-org",
    "name": "Organization created",
    "types": ["organization.created"],
    "severity": "critical",
    "coalesce_minutes": 0,
}


def _options(hub, user: str) -> HubOptions:
    return HubOptions(tuple(hub.urls.split(",")), HubAuth("password", user, getattr(hub.credentials, user)))


def hub_alerts(hub) -> list[dict[str, object]]:
    """The alerts the hub holds now (the newest message per alert), read as the viewer."""

    async def read() -> list[dict[str, object]]:
        nc = await connect(_options(hub, "viewer"), reconnect=False)
        try:
            js = nc.jetstream(timeout=5.0)
            # an unnamed ephemeral consumer: a viewer may not name one (a named one may be made durable)
            made = await js.add_consumer(
                alerts_stream(NAMES), filter_subject=f"tenant-events._alerts.{NAMES.tenant}.*.*"
            )
            sub = await js.pull_subscribe_bind(stream=alerts_stream(NAMES), name=made.name)
            out: list[dict[str, object]] = []
            try:
                while True:
                    for msg in await sub.fetch(100, timeout=1.0):
                        out.append(orjson.loads(msg.data))
            except (TimeoutError, nats.errors.TimeoutError):
                pass
            await sub.unsubscribe()
            return out
        finally:
            await nc.close()

    return asyncio.run(read())


def test_the_lease_holder_evaluates_stores_delivers_and_publishes_and_a_viewer_shows_the_team_alerts(
    make_simulator, nats_single, tmp_path, httpserver
):
    sim = make_simulator(heartbeat=0.2, rate=0)
    token = sim.mint_token(ttl=3600)
    receiver = Receiver(httpserver)
    data, seen = tmp_path / "relay", tmp_path / "viewer"
    with_rules(seen)  # the viewer has the same rules: without the team's alerts it would raise its own
    with team_destination([data], receiver.url) as name:
        proc = relay(sim, nats_single, token, data, name)
        procs = [proc]
        try:
            proc.wait_for("leader: holds the lease")
            wait_until(lambda: marked(nats_single), "the relay's mark on the hub", procs)
            procs.append(viewer(nats_single, seen))
            procs[1].wait_for("showing the team's alerts")
            sim.emit(GROUPS, ["group.created"])
            wait_until(lambda: len(receiver.distinct()) >= GROUPS, "every alert delivered", procs)
            wait_until(lambda: len(hub_alerts(nats_single)) >= GROUPS, "every alert on the hub", procs)
            wait_until(lambda: len(team_ids(seen)) >= GROUPS, "the viewer's team alerts", procs)
        finally:
            codes = [p.stop() for p in procs]
    assert codes == [0] * len(procs), "\n---\n".join(p.text() for p in procs)
    with AlertInbox(data / "tenants" / "acme-team.sqlite3") as inbox:
        stored = inbox.alerts()
    assert len(stored) == GROUPS and {a.rule_id for a in stored} == {"each-group"}
    # the dedup key names the hub tenant, the rule and the alert's first event: the same on any relay
    expected = {team_dedup_key("acme", f"each-group.{a.first_event_id}", 1) for a in stored}
    assert receiver.distinct() == expected and len(receiver.keys) == GROUPS
    on_hub = hub_alerts(nats_single)
    assert {(a["key"], a["version"]) for a in on_hub} == {
        (f"each-group.{a.first_event_id}", 1) for a in stored
    }
    assert all(a["hub_tenant"] == "acme" and a["severity"] == "critical" for a in on_hub)
    # the viewer shows the team's alerts, marked, and none of its own evaluation of the same events
    with AlertInbox(seen / "tenants" / "acme.sqlite3") as inbox:
        shown = inbox.alerts()
    assert len(shown) == GROUPS, [a.rule_name for a in shown]
    assert {a.id for a in shown} == team_ids(seen / "tenants" / "acme.sqlite3")
    assert all(a.rule_name == "Group created (team)" for a in shown)
    assert {a.first_event_id for a in shown} == {a.first_event_id for a in stored}
    assert procs[1].count("alert (critical)") == GROUPS  # its observers (stderr, notifications) got them


def test_a_viewer_switches_to_the_team_alerts_when_a_relay_starts_evaluating_after_it(
    make_simulator, nats_single, tmp_path, httpserver
):
    sim = make_simulator(heartbeat=0.2, rate=0)
    token = sim.mint_token(ttl=3600)
    receiver = Receiver(httpserver)
    plain, data, seen = tmp_path / "plain", tmp_path / "relay", tmp_path / "viewer"
    db = seen / "tenants" / "acme.sqlite3"
    with_rules(seen)
    with team_destination([data], receiver.url) as name:
        # a relay without --alerts-to: the viewer evaluates the rules itself
        first = HubCli(
            "relay",
            "--base-url",
            sim.base_url,
            "--name",
            "acme",
            "--data-dir",
            str(plain),
            "--from-timestamp",
            OLD,
            "--hub",
            nats_single.urls,
            "--hub-tenant",
            "acme",
            "--hub-user",
            "collector",
            "--lease-seconds",
            "2",
            env={
                "TENANT_EVENTS_ACCESS_TOKEN": token,
                "TENANT_EVENTS_HUB_PASSWORD": nats_single.credentials.collector,
            },
        )
        procs = [first]
        try:
            first.wait_for("leader: holds the lease")
            watcher = viewer(nats_single, seen)
            procs.append(watcher)
            sim.emit(GROUPS, ["group.created"])
            wait_until(lambda: _alert_count(db) >= GROUPS, "the viewer's own alerts", procs)
            assert not team_ids(seen) and watcher.count("showing the team's alerts") == 0
            assert first.stop() == 0, first.text()
            procs.append(relay(sim, nats_single, token, data, name))
            watcher.wait_for("showing the team's alerts", timeout=60)
            wait_until(lambda: len(team_ids(seen)) >= GROUPS, "the viewer's team alerts", procs)
            sim.emit(2, ["group.created"])  # after the switch: the team's alerts only
            wait_until(lambda: len(team_ids(seen)) >= GROUPS + 2, "the later team alerts", procs)
            wait_until(lambda: len(receiver.distinct()) >= GROUPS + 2, "every alert delivered", procs)
        finally:
            codes = [p.stop() for p in procs]
    assert codes == [0, 0, 0], "\n---\n".join(p.text() for p in procs)
    with AlertInbox(db) as inbox:
        shown = inbox.alerts()
    # each group's alert once, the team's: the viewer's own alerts of the same events are gone
    assert len(shown) == GROUPS + 2, [a.rule_name for a in shown]
    assert {a.id for a in shown} == team_ids(db)
    assert all(a.rule_name == "Group created (team)" for a in shown)
    assert len({a.first_event_id for a in shown}) == GROUPS + 2


def _alert_count(db) -> int:
    if not db.exists():
        return 0
    try:
        with AlertInbox(db) as inbox:
            return len(inbox.alerts())
    except Exception:  # being created
        return 0


def test_a_viewer_cannot_publish_an_alert_nor_write_delivery_state_nor_forge_the_acknowledging_user(
    nats_single,
):
    hub = nats_single
    refusals: list[Exception] = []

    async def go() -> None:
        collector = await connect(_options(hub, "collector"), reconnect=False)
        await provision(collector.jetstream(), NAMES, StreamPlan())  # the alerts stream and outbox bucket too
        viewer = await nats.connect(
            hub.urls.split(","),
            user="viewer",
            password=hub.credentials.viewer,
            inbox_prefix="_INBOX_viewer",
            error_cb=_keep(refusals),
        )
        js = viewer.jetstream(timeout=1.0)
        key = "each-group.evt_forged"
        with pytest.raises((TimeoutError, nats.errors.TimeoutError, nats.errors.NoRespondersError)):
            await js.publish(alert_subject(NAMES, key), b'{"severity": "critical"}')
        await viewer.publish(alert_subject(NAMES, key), b"{}")  # a plain publish: refused on the side
        await viewer.publish(f"$KV.{outbox_bucket(NAMES)}.{key}.1.dabc", b'{"state": "delivered"}')
        ack = orjson.dumps({"state": "acknowledged", "note": "not me", "at": 1.0, "by": "viewer2"})
        await viewer.publish(f"$KV.{triage_bucket(NAMES)}.{key}.viewer2", ack)  # in another user's name
        await viewer.flush()
        await asyncio.sleep(0.5)
        await viewer.close()
        cjs = collector.jetstream(timeout=5.0)
        assert (await cjs.stream_info(alerts_stream(NAMES))).state.messages == 0
        assert (await cjs.stream_info(f"KV_{outbox_bucket(NAMES)}")).state.messages == 0
        assert (await cjs.stream_info(f"KV_{triage_bucket(NAMES)}")).state.messages == 0
        # the collector may publish an alert (the relay does)
        await cjs.publish(alert_subject(NAMES, key), b"{}")
        assert (await cjs.stream_info(alerts_stream(NAMES))).state.messages == 1
        await collector.close()

    asyncio.run(go())
    texts = [str(e).lower() for e in refusals]
    assert sum("permissions violation" in t for t in texts) >= 4, texts
    assert any("_alerts.acme" in t for t in texts) and any("triage" in t for t in texts), texts


def _keep(into: list[Exception]):
    async def cb(exc: Exception) -> None:
        into.append(exc)

    return cb


def test_alerts_to_an_unknown_destination_is_one_line_and_exit_3(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "tenant_events",
            "relay",
            "--base-url",
            "http://127.0.0.1:9",
            "--name",
            "acme",
            "--data-dir",
            str(tmp_path),
            "--hub",
            "nats://127.0.0.1:9",
            "--hub-user",
            "collector",
            "--alerts-to",
            "nope",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "TENANT_EVENTS_ACCESS_TOKEN": "t", "TENANT_EVENTS_HUB_PASSWORD": "p"},
    )
    assert proc.returncode == 3, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "--alerts-to" in lines[0] and "'nope'" in lines[0], proc.stderr


def test_a_rule_saved_while_the_relay_holds_the_lease_runs_for_the_team_from_then_on(
    make_simulator, nats_single, tmp_path, httpserver
):
    sim = make_simulator(heartbeat=0.2, rate=0)
    token = sim.mint_token(ttl=3600)
    receiver = Receiver(httpserver)
    data = tmp_path / "relay"
    with team_destination([data], receiver.url) as name:
        proc = relay(sim, nats_single, token, data, name)
        try:
            proc.wait_for("leader: holds the lease")
            wait_until(lambda: marked(nats_single), "the relay's mark on the hub", [proc])
            team_db = data / "tenants" / "acme-team.sqlite3"
            before = stored(team_db) if team_db.exists() else 0
            sim.emit(2, ["organization.created"])  # no rule for these yet: evaluated before the save
            wait_until(
                lambda: stored(team_db) >= before + 2 and counter(team_db, "alerts_upto") >= stored(team_db),
                "the two evaluated",
                [proc],
            )
            paths = AppPaths.resolve(str(data))
            settings = load_settings(paths)
            settings.alerts.rules = [*settings.alerts.rules, EACH_ORG]
            save_settings(paths, settings)  # as `rules import` or the app's editor would
            proc.wait_for("the alert rules changed in the settings file: ")
            sim.emit(3, ["organization.created"])
            wait_until(
                lambda: len([k for k in receiver.distinct() if ":each-org." in k]) >= 3,
                "the new rule's alerts",
                [proc],
            )
        finally:
            code = proc.stop()
    assert code == 0, proc.text()
    with AlertInbox(data / "tenants" / "acme-team.sqlite3") as inbox:
        orgs = [a for a in inbox.alerts() if a.rule_id == "each-org"]
    assert len(orgs) == 3  # from the save on: the two before it stay as they were
