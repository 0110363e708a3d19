"""A viewer's feed of the team's alerts on a hub that answers late (a busy cluster making its consumer takes
longer than the request's timeout): the feed asks again and shows the alerts, where the viewer stopped with
"unexpected error: TimeoutError: nats: timeout" before."""

from __future__ import annotations

import asyncio
import signal

import orjson
import pytest

from tenant_events.hub.connection import HubAuth, HubOptions, connect
from tenant_events.hub.provision import StreamPlan, provision
from tenant_events.hub.subjects import HubNames
from tenant_events.hub.team_alerts import TeamAlertFeed, alert_subject

pytestmark = pytest.mark.hub
NAMES = HubNames("acme")


def test_the_team_alert_feed_asks_a_hub_that_answered_late_again(nats_single):
    server = nats_single.nodes[0].proc
    assert server is not None
    auth = HubAuth("password", "collector", nats_single.credentials.collector)
    seen: list[dict[str, object]] = []

    async def go() -> None:
        nc = await connect(HubOptions(tuple(nats_single.urls.split(",")), auth), reconnect=True)
        try:
            await provision(nc.jetstream(), NAMES, StreamPlan())
            await nc.jetstream().publish(alert_subject(NAMES, "each-group.evt_1"), orjson.dumps({"v": 1}))
            feed = TeamAlertFeed(nc, NAMES, seen.append, timeout=0.5)
            server.send_signal(signal.SIGSTOP)  # the hub answers nothing for 1.5 s: the first ask times out
            resumed = asyncio.get_running_loop().call_later(1.5, server.send_signal, signal.SIGCONT)
            try:
                await feed.start()
            finally:
                resumed.cancel()
                server.send_signal(signal.SIGCONT)
            for _ in range(200):
                if seen:
                    break
                await asyncio.sleep(0.05)
            await feed.stop()
        finally:
            await nc.close()

    asyncio.run(go())
    assert seen == [{"v": 1}]
