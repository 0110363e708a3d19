"""The team's delivery state on a real nats-server, as the delivery worker uses it under a relay: what another
relay delivered is not sent again, a relay that takes over goes on counting attempts (and backing off) where
the last one stopped, and one that lost the lease sends nothing."""

from __future__ import annotations

import asyncio
import sqlite3
import time

import orjson
import pytest
from werkzeug import Response

from helpers.deliveries import alert_write, store_alerts, target
from helpers.slack import bound
from tenant_events.destinations.worker import Backoff, DeliveryWorker
from tenant_events.hub.connection import HubAuth, HubOptions, connect
from tenant_events.hub.provision import StreamPlan, provision
from tenant_events.hub.subjects import HubNames
from tenant_events.hub.team_alerts import SharedOutbox, delivery_key, outbox_bucket
from tenant_events.tenant.team_alerts import TeamDeliveries

pytestmark = pytest.mark.hub
NAMES = HubNames("acme")
KEY = delivery_key(
    "mass-deletion.evt_a", "firing", 1, 0, "hook"
)  # alert_write(): rule mass-deletion, first event evt_a


def _collector(hub) -> HubOptions:
    return HubOptions(tuple(hub.urls.split(",")), HubAuth("password", "collector", hub.credentials.collector))


def _pending(db) -> list[tuple[str, int, float]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT state, attempts, next_at FROM alert_deliveries").fetchall()


def _run(
    hub, db, url, before: dict[str, object] | None, fence, until, *, forget: bool = False
) -> dict[str, object]:
    """One worker over `db` with the hub's outbox (`before` recorded there first; with `forget`, the record
    deleted first) until `until()`; the record the hub holds afterwards."""

    async def go() -> dict[str, object]:
        nc = await connect(_collector(hub), reconnect=False)
        await provision(nc.jetstream(), NAMES, StreamPlan())
        outbox = await SharedOutbox.open(nc, NAMES, "relay-b")
        kv = await nc.jetstream().key_value(outbox_bucket(NAMES))
        if before is not None:
            await kv.put(KEY, orjson.dumps(before))
        if forget:
            await kv.delete(KEY)
        worker = DeliveryWorker(
            db,
            lambda: {"hook": target("hook", url)},
            backoff=Backoff(base=0.1, cap=60),
            shared=TeamDeliveries(outbox, "acme", fence),
        )
        task = asyncio.create_task(worker.run())
        deadline = time.monotonic() + bound(30)
        try:
            while not until():
                assert time.monotonic() < deadline, f"timed out: {_pending(db)}"
                worker.kick()
                await asyncio.sleep(0.05)
        finally:
            await worker.close()
            await task
        state = await outbox.state(KEY)
        await nc.close()
        return state

    return asyncio.run(go())


def test_what_another_relay_delivered_is_not_sent_again(nats_single, tmp_path, httpserver):
    httpserver.expect_request("/hook").respond_with_data("ok")
    db = tmp_path / "acme-team.sqlite3"
    store_alerts(db, [alert_write()])
    url = f"json://127.0.0.1:{httpserver.port}/hook"
    record = {"state": "delivered", "attempts": 1, "at": 1.0, "relay": "relay-a"}
    state = _run(
        nats_single,
        db,
        url,
        record,
        lambda: True,
        lambda: [r[0] for r in _pending(db)] == ["delivered"],
    )
    assert httpserver.log == [] and state["relay"] == "relay-a"


@pytest.mark.parametrize("loss", ["deleted", "rewritten as never tried"])
def test_a_relay_that_finds_the_record_gone_or_shrunk_sends_nothing_again_and_writes_it_back(
    nats_single, tmp_path, httpserver, loss
):
    """The bucket lost the record (deleted, emptied) or holds less than happened (a record put back as never
    tried): the receipt on the alerts stream, which only collectors write, still says it was delivered."""
    httpserver.expect_request("/hook").respond_with_data("ok")
    url = f"json://127.0.0.1:{httpserver.port}/hook"
    first, second = tmp_path / "a" / "acme-team.sqlite3", tmp_path / "b" / "acme-team.sqlite3"
    for db in (first, second):
        db.parent.mkdir()
        store_alerts(db, [alert_write()])
    done = lambda db: lambda: [r[0] for r in _pending(db)] == ["delivered"]  # noqa: E731
    _run(nats_single, first, url, None, lambda: True, done(first))
    assert len(httpserver.log) == 1
    shrunk = {"state": "pending", "attempts": 0, "at": 1.0, "relay": "relay-a"} if loss != "deleted" else None
    state = _run(nats_single, second, url, shrunk, lambda: True, done(second), forget=loss == "deleted")
    assert len(httpserver.log) == 1, "the relay that took over sent the alert again"
    assert state["state"] == "delivered"  # written back from the receipt


def test_a_takeover_goes_on_counting_attempts_and_backing_off(nats_single, tmp_path, httpserver):
    httpserver.expect_request("/hook").respond_with_handler(lambda r: Response("down", status=500))
    db = tmp_path / "acme-team.sqlite3"
    store_alerts(db, [alert_write()])
    url = f"json://127.0.0.1:{httpserver.port}/hook"
    record = {"state": "pending", "attempts": 6, "at": 1.0, "relay": "relay-a"}
    started = time.time()
    state = _run(
        nats_single,
        db,
        url,
        record,
        lambda: True,
        lambda: len(httpserver.log) >= 1 and _pending(db)[0][1] >= 1,
    )
    assert state["state"] == "pending" and state["attempts"] == 7 and state["relay"] == "relay-b"
    # the backoff of a 7th attempt (0.1 s · 2⁶ · 50–100 %), not of a first one (0.05–0.1 s)
    assert _pending(db)[0][2] - started >= 3.2, _pending(db)
    key = httpserver.log[0][0].headers["Idempotency-Key"]
    assert key == "tenant-events:acme:mass-deletion.evt_a:1"


def test_a_relay_that_lost_the_lease_sends_nothing(nats_single, tmp_path, httpserver):
    httpserver.expect_request("/hook").respond_with_data("ok")
    db = tmp_path / "acme-team.sqlite3"
    store_alerts(db, [alert_write()])
    url = f"json://127.0.0.1:{httpserver.port}/hook"
    routed = time.monotonic() + 1.5  # long enough for several passes over the due delivery
    state = _run(
        nats_single, db, url, None, lambda: False, lambda: bool(_pending(db)) and time.monotonic() > routed
    )
    assert httpserver.log == [] and state == {} and _pending(db)[0][:2] == ("pending", 0)


ORGS = ["Acme", "Umbrella", "Globex", "Initech", "Hooli", "Stark", "Wayne", "Tyrell"]


def _flood(tag: str = ""):
    """Eight firings of one grouped rule stored together (a script touching eight organizations)."""
    from dataclasses import replace

    return [
        replace(
            alert_write("org-connection", "critical"),
            rule_name=f"Organization connection changed · organization {org}",
            group_key=f"org_{org}",
            first_event_id=f"evt_{org}{tag}",
        )
        for org in ORGS
    ]


def _keys(orgs, tag: str = "") -> list[str]:
    return [delivery_key(f"org-connection.evt_{o}{tag}", "firing", 1, 0, "hook") for o in orgs]


def _deliver(hub, db, url, delivered_before: list[str], tag: str = "") -> list[str]:
    """A relay's worker over `db` (the hub's outbox holding `delivered_before` as delivered) until its local
    outbox has nothing pending; the hub's state of each flood delivery afterwards."""

    async def go() -> list[str]:
        nc = await connect(_collector(hub), reconnect=False)
        await provision(nc.jetstream(), NAMES, StreamPlan())
        outbox = await SharedOutbox.open(nc, NAMES, "relay-b")
        for key in delivered_before:
            await outbox.record(key, "delivered", 1)
        worker = DeliveryWorker(
            db, lambda: {"hook": target("hook", url)}, shared=TeamDeliveries(outbox, "acme", lambda: True)
        )
        task = asyncio.create_task(worker.run())
        deadline = time.monotonic() + bound(30)
        try:
            while not (rows := _pending(db)) or any(state != "delivered" for state, _, _ in rows):
                assert time.monotonic() < deadline, f"timed out: {rows}"
                worker.kick()
                await asyncio.sleep(0.05)
        finally:
            await worker.close()
            await task
        states = [str((await outbox.state(k)).get("state")) for k in _keys(ORGS, tag)]
        await nc.close()
        return states

    return asyncio.run(go())


def test_a_flood_is_one_team_delivery_recorded_for_each_alert_and_a_takeover_sends_none_again(
    nats_single, tmp_path, httpserver
):
    """The relay folds a flood as the local path does (destinations/flood.py): one message per destination under
    the team's keys, each alert's delivery recorded on the hub; a relay that takes over with its own copy of the
    alerts sends nothing again, and one that finds some delivered before folds only the rest."""
    from helpers.team_alerts import Receiver
    from tenant_events.hub.team_alerts import team_dedup_key

    receiver = Receiver(httpserver)
    db_a, db_b, db_c = (tmp_path / n / "acme-team.sqlite3" for n in ("a", "b", "c"))
    for db, tag in ((db_a, ""), (db_b, ""), (db_c, "x")):
        db.parent.mkdir()
        store_alerts(db, _flood(tag))
    assert _deliver(nats_single, db_a, receiver.url, []) == ["delivered"] * len(ORGS)
    [body] = receiver.bodies
    assert body["title"] == "[critical] Organization connection changed · 8 organizations — acme"
    assert receiver.keys == [team_dedup_key("acme", "org-connection.evt_Acme", 1) + ":fold-8"]
    assert all(f"Organization connection changed · organization {o}" in str(body["message"]) for o in ORGS)

    assert _deliver(nats_single, db_b, receiver.url, []) == ["delivered"] * len(ORGS)
    assert len(receiver.keys) == 1  # the takeover's relay found every one delivered

    # another flood, three of whose alerts went out one by one before a takeover: the other five, as one fold
    assert _deliver(nats_single, db_c, receiver.url, _keys(ORGS[:3], "x"), "x") == ["delivered"] * len(ORGS)
    assert receiver.keys[1:] == [team_dedup_key("acme", "org-connection.evt_Initechx", 1) + ":fold-5"]
