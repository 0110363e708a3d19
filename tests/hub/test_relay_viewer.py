"""Relay and viewers in one process against a real nats-server and the real simulator: what viewers receive
(filters, rejected frames, gap markers), the hub going away and coming back, and how the lease moves."""

from __future__ import annotations

import asyncio
import io
import time
from collections.abc import Callable, Coroutine
from pathlib import Path

import nats
import nats.js.errors
import pytest

from helpers.fixtures_engine import OLD, reference_ids
from helpers.slack import bound
from tenant_events.hub.connection import HubAuth, HubOptions
from tenant_events.hub.messages import CursorRecord, LeaseRecord
from tenant_events.hub.provision import StreamPlan
from tenant_events.hub.relay import Relay, RelayConfig
from tenant_events.hub.subjects import CURSOR_KEY, LEASE_KEY, HubNames
from tenant_events.hub.viewer import HubViewer, ViewerConfig
from tenant_events.monitor import TenantMonitor
from tenant_events.paths import AppPaths
from tenant_events.store import EventReader
from tenant_events.stream.engine import EngineConfig
from tenant_events.stream.tokens import StaticTokenProvider
from tenant_events.values.stream_states import StateChange, StreamState, state_line

pytestmark = pytest.mark.hub
NAMES = HubNames("acme")
USER_TYPES = ("user.created", "user.deleted", "user.updated")


def make_relay(sim, hub, lease: float = 2.0) -> Relay:
    engine = EngineConfig(sim.base_url, from_timestamp=OLD, name="acme", stall_timeout=2.0)
    options = HubOptions(
        tuple(hub.urls.split(",")), HubAuth("password", "collector", hub.credentials.collector)
    )
    return Relay(
        RelayConfig(engine, options, NAMES, StreamPlan(lease_ttl=lease), standby_poll=0.2),
        StaticTokenProvider(sim.mint_token(ttl=3600)),
    )


def make_viewer(
    hub, data: Path, name: str, event_types: tuple[str, ...] = ()
) -> tuple[TenantMonitor, list[StateChange]]:
    """A monitor whose source is the hub: the same path the app and `stream --hub` take."""
    options = HubOptions(tuple(hub.urls.split(",")), HubAuth("password", "viewer", hub.credentials.viewer))
    config = ViewerConfig(options, NAMES, event_types, name=name, backoff_cap=2.0)
    monitor = TenantMonitor(
        name,
        AppPaths.resolve(str(data)).ensure(),
        EngineConfig(options.shown, name=name),
        None,
        source=lambda writer: HubViewer(config, writer),
    )
    states: list[StateChange] = []
    monitor.on_state.append(states.append)
    return monitor, states


async def until(check: Callable[[], bool], limit: float = 30.0, what: str = "") -> float:
    start, limit = time.monotonic(), bound(limit)  # stretched for a loaded machine
    while not check():
        if time.monotonic() - start > limit:
            raise AssertionError(f"timed out after {limit:.0f} s waiting for {what}")
        await asyncio.sleep(0.02)
    return time.monotonic() - start


async def until_cursor(hub, limit: float = 30.0) -> None:
    """Until the hub holds the relay's cursor (the position after every event it acknowledged)."""
    nc = await nats.connect(
        hub.urls, user="collector", password=hub.credentials.collector, inbox_prefix="_INBOX_collector"
    )
    try:
        kv = await nc.jetstream().key_value(NAMES.cursor_bucket)
        start, limit = time.monotonic(), bound(limit)
        while True:
            try:
                entry = await kv.get(CURSOR_KEY)
                if CursorRecord.model_validate_json(entry.value or b"{}").offset is not None:
                    return
            except nats.js.errors.KeyNotFoundError:
                pass
            if time.monotonic() - start > limit:
                raise AssertionError(
                    f"timed out after {limit:.0f} s waiting for the relay's cursor on the hub"
                )
            await asyncio.sleep(0.05)
    finally:
        await nc.close()


def stored(monitor: TenantMonitor) -> int:
    return monitor.stats.events_stored


@pytest.mark.expect_warning_logs  # the rejected frames are logged
def test_viewers_get_filtered_types_rejected_frames_and_gap_markers(make_simulator, nats_single, tmp_path):
    sim = make_simulator(backlog=300, heartbeat=0.2, rotate_after=1.0, retention=400)
    sim.faults(malformed="bad_envelope", fault_after=20)  # the relay keeps it as rejected; so must viewers

    async def go() -> None:
        every, _ = make_viewer(nats_single, tmp_path / "all", "all")
        users, _ = make_viewer(nats_single, tmp_path / "users", "users", USER_TYPES)
        await every.start()
        await users.start()
        relay = make_relay(sim, nats_single)
        task = asyncio.create_task(relay.run())
        await until(
            lambda: stored(every) >= 300 and every.stats.rejected >= 1, what="the backlog and the reject"
        )
        # the relay moves the hub's cursor after the viewers may have the batch (and, its lease lapsed on a
        # loaded machine, not at all): the gap below needs a cursor the tenant no longer holds
        await until_cursor(nats_single)
        relay.stop()
        await task
        await asyncio.to_thread(sim.emit, 500)  # more than the tenant keeps: the relay's cursor expires (410)
        relay = make_relay(sim, nats_single)
        task = asyncio.create_task(relay.run())
        await until(lambda: stored(every) >= 800 - 100 and every.stats.rejected >= 1, what="after the gap")
        await asyncio.sleep(0.5)
        relay.stop()
        await task
        for monitor in (every, users):
            await monitor.stop()

    run(go)
    every_ids, every_types, every_rejected, every_gaps = read_db(tmp_path / "all", "all")
    user_ids, user_types, user_rejected, user_gaps = read_db(tmp_path / "users", "users")
    assert len(every_ids) == len(set(every_ids))
    assert every_rejected == user_rejected == 1
    assert every_gaps == user_gaps == 1  # "the stored position expired; some events may be missing"
    assert set(user_types) <= set(USER_TYPES) and user_types
    assert user_ids == [i for i, t in zip(every_ids, every_types, strict=True) if t in USER_TYPES]
    newest = reference_ids(sim, 400)  # what the tenant still holds: all of it arrived, in order, at the end
    assert every_ids[-400:] == newest


def run(main: Callable[[], Coroutine[None, None, None]], limit: float = 120.0) -> None:
    """asyncio.run with a deadline that names where every task was stuck (instead of a silent hang)."""

    async def guarded() -> None:
        task = asyncio.create_task(main())
        done, _ = await asyncio.wait({task}, timeout=limit)
        if task in done:
            return task.result()
        stacks = io.StringIO()
        for other in asyncio.all_tasks():
            other.print_stack(file=stacks)
        task.cancel()
        raise AssertionError(f"stuck after {limit} s:\n{stacks.getvalue()[-6000:]}")

    asyncio.run(guarded())


def read_db(data: Path, name: str) -> tuple[list[str], list[str], int, int]:
    """(ids in stored order, their types, rejected rows, gap rows) of a viewer's database."""
    with EventReader(data / "tenants" / f"{name}.sqlite3") as reader:
        rows = [e for e, _ in reader.export_iter()]
        return [e.event_id for e in rows], [e.type for e in rows], reader.rejected_count(), len(reader.gaps())


def test_the_hub_going_away_stops_the_leader_and_nothing_is_lost_when_it_returns(
    simulator, nats_single, tmp_path
):
    sim, hub = simulator, nats_single
    sim.emit(200)

    async def go() -> None:
        viewer, states = make_viewer(hub, tmp_path / "v", "v")
        await viewer.start()
        relay = make_relay(sim, hub, lease=2.0)
        task = asyncio.create_task(relay.run())
        await until(lambda: stored(viewer) >= 200, what="the first events")
        await asyncio.to_thread(hub.nodes[0].stop)
        # The leader cannot renew its lease: within half the TTL it closes the tenant connection (network loss).
        closed = await until(lambda: sim.stats()["connections"] == 0, 5.0, "the leader to stop streaming")
        for _ in range(20):  # and it stays closed while the hub is away: no lease, no tenant connection
            await asyncio.sleep(0.1)
            assert sim.stats()["connections"] == 0, "the relay reconnected to the tenant without a lease"
        await until(
            lambda: any(
                s.state is StreamState.RECONNECTING
                and "network error" in s.message
                and state_line(s).count("reconnecting in") == 1  # the wait said once, counting down
                for s in states
            ),
            10.0,
            "the viewer's backoff",
        )
        await asyncio.to_thread(sim.emit, 100)  # while the hub is down: they wait at the tenant
        await asyncio.to_thread(hub.nodes[0].start)
        await asyncio.to_thread(hub.nodes[0].wait_healthy)
        await until(lambda: stored(viewer) >= 300, 30.0, "the events from the outage")
        # the lease lost with the hub and taken again once it was back (a loaded machine that missed a renewal
        # takes it once more: more terms, each its own)
        assert relay.leader_terms >= 2
        relay.stop()
        await task
        await viewer.stop()
        print(f"the leader closed the tenant connection {closed:.1f} s after the hub went away")

    run(go)
    ids, _, _, _ = read_db(tmp_path / "v", "v")
    assert ids == reference_ids(sim, 300)


def test_a_clean_stop_hands_over_at_once_and_a_lost_lease_stops_the_stream(simulator, nats_single):
    sim, hub = simulator, nats_single
    sim.emit(50)

    async def go() -> None:
        ttl = bound(3.0)  # a released lease moves in well under its TTL, however loaded the machine
        first, second = make_relay(sim, hub, lease=ttl), make_relay(sim, hub, lease=ttl)
        tasks = [asyncio.create_task(first.run()), asyncio.create_task(second.run())]
        await until(lambda: (first.engine is None) != (second.engine is None), what="one leader")
        leader, standby = (first, second) if first.engine else (second, first)
        await asyncio.sleep(1.0)
        assert standby.engine is None and sim.stats()["connections"] == 1
        leader.stop()
        handover = await until(lambda: standby.engine is not None, 5.0, "the standby to lead")
        assert handover < ttl / 2, f"a released lease took {handover:.1f} s to move"  # not the TTL
        await tasks[[first, second].index(leader)]

        # Someone else takes the key (an operator, a relay from another site): this one must stop streaming.
        nc = await nats.connect(
            hub.urls, user="collector", password=hub.credentials.collector, inbox_prefix="_INBOX_collector"
        )
        kv = await nc.jetstream().key_value(NAMES.lease_bucket)
        other = LeaseRecord(holder="elsewhere:1:x", host="elsewhere", pid=1, acquired_at=time.time())
        await kv.put(LEASE_KEY, other.to_bytes())
        stopped = await until(lambda: standby.engine is None, 3.0, "the leader to give up")
        await until(lambda: sim.stats()["connections"] == 0, 2.0, "the tenant connection to close")
        # Nobody renews the foreign lease: it lapses and this relay leads again.
        await until(lambda: standby.engine is not None, 10.0 + ttl, "the lease to come back")
        standby.stop()
        await tasks[[first, second].index(standby)]
        await nc.close()
        print(f"handover {handover:.2f} s; a taken lease stopped the stream in {stopped:.2f} s")

    run(go)
