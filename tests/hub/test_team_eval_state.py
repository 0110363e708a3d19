"""The team's evaluation state read back by a relay taking over, on a real nats-server, when the hub hands the
watch its saved alerts only after answering that nothing was pending any more (the order a loaded machine
gave): every alert comes back, none is read as "no alerts"."""

from __future__ import annotations

import asyncio

import pytest

from helpers.nats_late_hop import LateHop
from helpers.slack import bound
from helpers.stored_alerts import stored_alert
from tenant_events.hub.connection import HubAuth, HubOptions, connect
from tenant_events.hub.eval_state import EvalState
from tenant_events.hub.subjects import HubNames
from tenant_events.store.team_state import CarriedAlert, TeamState

pytestmark = pytest.mark.hub
NAMES = HubNames("acme")
GROUPS = 5


def _collector(urls: str, hub) -> HubOptions:
    return HubOptions(tuple(urls.split(",")), HubAuth("password", "collector", hub.credentials.collector))


def _saved() -> list[tuple[str, CarriedAlert]]:
    alerts = []
    for i in range(GROUPS):
        alert = stored_alert(id=0, first_seq=0, last_seq=0, rule_id="each-group", first_event_id=f"evt_{i}")
        alerts.append((f"each-group.evt_{i}", CarriedAlert(alert, ((1_000 + i, f"evt_{i}"),))))
    return alerts


def test_a_takeover_reads_every_saved_alert_when_the_hub_delivers_them_after_saying_none_pending(nats_single):
    async def go() -> tuple[TeamState | None, int]:
        nc = await connect(_collector(nats_single.urls, nats_single), reconnect=False)
        try:
            assert await (await EvalState.open(nc, NAMES)).save(_saved(), ("evt_4", 1_004))
        finally:
            await nc.close()
        async with LateHop(nats_single.urls) as hop:
            late = await connect(_collector(hop.url, nats_single), reconnect=False)
            try:
                state = await EvalState.open(late, NAMES)
                return await asyncio.wait_for(state.load(), bound(30)), hop.reordered
            finally:
                await late.close()

    loaded, reordered = asyncio.run(go())
    assert reordered == GROUPS  # the hub's answer came before every entry: the case under test
    assert loaded is not None and loaded.position == ("evt_4", 1_004)
    assert sorted(a.alert.first_event_id for a in loaded.alerts) == [f"evt_{i}" for i in range(GROUPS)]
