"""Flow control of a viewer's feed of the team's alerts (an ordered push consumer on a nats-server): thousands of
alerts on the hub, a viewer that stores each one on the event loop (as tenant/team_feed.py does) — it receives
every one, none twice, in the hub's order."""

from __future__ import annotations

import asyncio
import time

import pytest

from helpers.nats_hub import NatsHub
from tenant_events.hub.connection import HubAuth, HubOptions, connect
from tenant_events.hub.provision import StreamPlan, provision
from tenant_events.hub.subjects import HubNames
from tenant_events.hub.team_alerts import AlertPublisher, TeamAlertFeed, alerts_stream

pytestmark = [pytest.mark.hub]
NAMES = HubNames("acme")
ALERTS = 3000


def _options(hub: NatsHub, user: str) -> HubOptions:
    return HubOptions(tuple(hub.urls.split(",")), HubAuth("password", user, getattr(hub.credentials, user)))


def test_a_viewer_receives_thousands_of_team_alerts_each_once(nats_single):
    async def go() -> tuple[list[str], float]:
        collector = await connect(_options(nats_single, "collector"), reconnect=False)
        await provision(collector.jetstream(), NAMES, StreamPlan())
        publisher = AlertPublisher(collector, NAMES)
        pending = []
        for i in range(ALERTS):
            alert = {"rule": "each-group", "count": 1, "detail": "x" * 400}  # about a real alert's size
            pending.append(publisher.publish(f"each-group.evt_{i:05d}", 1, alert))
            if len(pending) == 200:
                assert all(await asyncio.gather(*pending))
                pending = []
        assert all(await asyncio.gather(*pending))
        info = await collector.jetstream().stream_info(alerts_stream(NAMES))
        assert info.state.messages == ALERTS
        await collector.close()

        seen: list[str] = []
        done = asyncio.Event()

        def arrived(payload: dict[str, object]) -> None:
            time.sleep(0.001)  # a viewer stores each alert in SQLite on the loop's thread
            seen.append(str(payload["key"]))
            if len(seen) >= ALERTS:
                done.set()

        viewer = await connect(_options(nats_single, "viewer"), reconnect=False)
        feed = TeamAlertFeed(viewer, NAMES, arrived)
        start = time.monotonic()
        await feed.start()
        try:
            await asyncio.wait_for(done.wait(), 120)
            await asyncio.sleep(1.0)  # anything sent twice would arrive meanwhile
        finally:
            await feed.stop()
            await viewer.close()
        return seen, time.monotonic() - start

    seen, took = asyncio.run(go())
    assert len(seen) == ALERTS, len(seen)
    assert seen == [f"each-group.evt_{i:05d}" for i in range(ALERTS)]  # all, once, in order
    print(f"{ALERTS} team alerts to one viewer in {took:.1f} s")
