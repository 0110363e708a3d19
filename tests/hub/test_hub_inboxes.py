"""No viewer can listen in on, or feed, another viewer's read — against real nats-server processes running the
documented configuration (packaging/nats/accounts.conf), a real relay and the simulator.

  - a hostile viewer (its own user, `viewer2`) cannot subscribe to the victim's inbox, the shared `_INBOX.>` or
    everything, and cannot publish into an inbox;
  - deliveries forced into the victim's inbox anyway (it is learnt here through the server's monitoring port,
    which a viewer never reaches): JetStream pushing the tenant's stream through the hostile viewer's consumer,
    the hostile viewer's pull request answered there, and raw forgeries from a test-only privileged user — none
    is stored, none moves the victim's stored hub position, and the real events that follow are all stored;
  - a stream sequence that jumps (messages deleted on the hub) becomes a gap marker, never a silent skip.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import nats
import nats.errors
import pytest
from nats.js.api import ConsumerConfig, DeliverPolicy

from helpers.fixtures_engine import OLD, reference_ids
from helpers.nats_hub import CONFIG_DIR, NatsHub, start_single
from helpers.slack import bound
from tenant_events.hub.connection import HubAuth, HubOptions
from tenant_events.hub.messages import RejectedPayload
from tenant_events.hub.provision import StreamPlan
from tenant_events.hub.relay import Relay, RelayConfig
from tenant_events.hub.subjects import HubNames
from tenant_events.hub.viewer import HubViewer, ViewerConfig
from tenant_events.monitor import TenantMonitor
from tenant_events.paths import AppPaths
from tenant_events.store import EventReader
from tenant_events.stream.engine import EngineConfig
from tenant_events.stream.tokens import StaticTokenProvider

pytestmark = pytest.mark.hub
NAMES = HubNames("acme")
SPY = (
    "spy-" + "x" * 12
)  # a test-only user with every permission: what no hub should have, to force deliveries


@pytest.fixture
def hub_with_spy(tmp_path: Path) -> Iterator[NatsHub]:
    """hub.conf and accounts.conf as documented, plus one privileged test user added to the TEAM account."""
    for name in ("hub.conf", "accounts.conf"):
        shutil.copy(CONFIG_DIR / name, tmp_path / name)
    accounts = tmp_path / "accounts.conf"
    text = accounts.read_text()
    assert text.count("    users: [\n") == 1  # the TEAM account's
    accounts.write_text(
        text.replace("    users: [\n", f'    users: [\n      {{ user: spy, password: "{SPY}" }}\n', 1)
    )
    hub = start_single(tmp_path, config=tmp_path / "hub.conf")
    try:
        yield hub
    finally:
        hub.stop()


def make_relay(sim, hub: NatsHub) -> Relay:
    engine = EngineConfig(sim.base_url, from_timestamp=OLD, name="acme", stall_timeout=2.0)
    options = HubOptions((hub.urls,), HubAuth("password", "collector", hub.credentials.collector))
    return Relay(
        RelayConfig(engine, options, NAMES, StreamPlan(lease_ttl=2.0), standby_poll=0.2),
        StaticTokenProvider(sim.mint_token(ttl=3600)),
    )


class Victim:
    """A viewer as the app and `stream --hub` run it: a monitor whose source is the hub."""

    def __init__(self, hub: NatsHub, data: Path, event_types: tuple[str, ...] = ()) -> None:
        options = HubOptions((hub.urls,), HubAuth("password", "viewer", hub.credentials.viewer))
        config = ViewerConfig(options, NAMES, event_types, name="victim", backoff_cap=2.0)
        self.viewers: list[HubViewer] = []

        def source(writer):
            viewer = HubViewer(config, writer)
            self.viewers.append(viewer)
            return viewer

        self.data = data
        self.monitor = TenantMonitor(
            "victim",
            AppPaths.resolve(str(data)).ensure(),
            EngineConfig(options.shown, name="victim"),
            None,
            source=source,
        )

    @property
    def stored(self) -> int:
        return self.monitor.stats.events_stored

    @property
    def dropped(self) -> int:
        return sum(v.dropped for v in self.viewers)

    def database(self) -> tuple[list[str], str | None, int, list[str]]:
        return database(self.data)


def database(data: Path) -> tuple[list[str], str | None, int, list[str]]:
    """(event ids in stored order, the stored hub position, rejected rows, gap reasons) of the victim."""
    with EventReader(data / "tenants" / "victim.sqlite3") as reader:
        ids = [e.event_id for e, _ in reader.export_iter()]
        return ids, reader.cursor().offset, reader.rejected_count(), [g.reason for g in reader.gaps()]


async def until(check: Callable[[], bool], limit: float = 30.0, what: str = "") -> None:
    start, limit = time.monotonic(), bound(limit)  # stretched for a loaded machine
    while not check():
        if time.monotonic() - start > limit:
            raise AssertionError(f"timed out after {limit:.0f} s waiting for {what}")
        await asyncio.sleep(0.02)


async def publish_events(sim, hub: NatsHub, total: int) -> None:
    """Run a relay until the hub's stream holds `total` events, then stop it."""
    relay = make_relay(sim, hub)
    task = asyncio.create_task(relay.run())
    nc = await nats.connect(hub.urls, user="spy", password=SPY)
    js = nc.jetstream()

    async def count() -> int:
        try:
            return (await js.stream_info(NAMES.stream)).state.messages
        except nats.js.errors.NotFoundError:
            return 0

    deadline = time.monotonic() + bound(60)
    while await count() < total:
        assert time.monotonic() < deadline, "the relay did not publish"
        await asyncio.sleep(0.05)
    relay.stop()
    await task
    await nc.close()


async def victim_after(
    sim,
    hub: NatsHub,
    data: Path,
    events: int,
    stored: int | None = None,
    *,
    event_types: tuple[str, ...] = (),
) -> Victim:
    """A victim viewer that stored `stored` (default: all) of the first `events` events the relay published."""
    await publish_events(sim, hub, events)
    victim = Victim(hub, data, event_types)
    await victim.monitor.start()
    want = events if stored is None else stored
    await until(lambda: victim.stored >= want, what=f"the victim's first {want} events")
    return victim


def victim_inbox(hub: NatsHub) -> str:
    """The victim's pull inbox, read from the server's monitoring port (no hub client can see it)."""
    node = hub.nodes[0]
    connz = httpx.get(f"http://127.0.0.1:{node.monitor_port}/connz?subs=1&auth=1", timeout=5).json()
    subs = [
        s
        for c in connz["connections"]
        if c.get("authorized_user") == "viewer"
        for s in c.get("subscriptions_list", [])
        if "*" not in s
    ]
    assert len(subs) == 1, connz
    return subs[0]


def _envelope(tenant: str, n: int, source: str = "") -> dict:
    return {
        "specversion": "1.0",
        "type": "user.deleted",
        "source": source or f"urn:sim:{tenant}.evil.example",
        "id": f"evt_{'F' * 16}{n:06d}",
        "time": "2030-01-01T00:00:00.000Z",
        "data": {"object": {"user_id": "auth0|victim"}},
        "xtenant": tenant,
        "xstream": "est_" + "E" * 22,
    }


def _event(tenant: str, n: int, source: str = "") -> bytes:
    """A valid event message (`{offset, event}`, as the relay publishes it) of `tenant`."""
    message = {"type": "user.deleted", "offset": f"evil-{n}", "event": _envelope(tenant, n, source)}
    return json.dumps(message).encode()


@pytest.mark.expect_warning_logs  # the victim logs what it ignores on its inbox
def test_a_hostile_viewer_can_neither_see_nor_feed_another_viewers_inbox(simulator, hub_with_spy, tmp_path):
    sim, hub = simulator, hub_with_spy
    sim.emit(15)

    async def go() -> None:
        victim = await victim_after(sim, hub, tmp_path / "victim", 15)
        before = await asyncio.to_thread(victim.database)
        assert before[1] == "hub:15" and before[2] == 0

        # The hostile viewer, signed in as itself with the documented permissions.
        errors: list[str] = []

        async def record(exc: Exception) -> None:
            errors.append(str(exc).lower())

        hostile = await nats.connect(
            hub.urls,
            user="viewer2",
            password=hub.credentials.viewer2,
            error_cb=record,
            inbox_prefix="_INBOX_viewer2",
            allow_reconnect=False,
        )
        seen: list[str] = []

        async def listen(msg) -> None:
            seen.append(msg.subject)

        for subject in ("_INBOX.>", "_INBOX_viewer.>", ">"):
            await hostile.subscribe(subject, cb=listen)
        await hostile.publish("_INBOX_viewer.x", b"forged")
        await hostile.flush()
        await asyncio.sleep(2.5)  # the victim's read gets a heartbeat each second: it would have been seen
        assert seen == [], seen
        violations = [e for e in errors if "permissions violation" in e]
        for subject in ("_inbox.>", "_inbox_viewer.>", '">"'):
            assert any("subscription" in e and subject.strip('"') in e for e in violations), (subject, errors)
        assert any("publish" in e and "_inbox_viewer.x" in e for e in violations), errors

        # Forced deliveries into the victim's inbox, learnt here from the monitoring port.
        inbox = victim_inbox(hub)
        js = hostile.jetstream(timeout=5)
        await js.add_consumer(
            NAMES.stream,
            ConsumerConfig(deliver_subject=inbox, deliver_policy=DeliverPolicy.ALL, inactive_threshold=30),
        )
        pulled = await js.add_consumer(
            NAMES.stream, ConsumerConfig(deliver_policy=DeliverPolicy.ALL, inactive_threshold=30)
        )
        await hostile.publish(
            f"$JS.API.CONSUMER.MSG.NEXT.{NAMES.stream}.{pulled.name}",
            json.dumps({"batch": 15}).encode(),
            reply=inbox,
        )
        refused: list[str] = []

        async def spy_error(exc: Exception) -> None:
            refused.append(str(exc).lower())

        spy = await nats.connect(hub.urls, user="spy", password=SPY, error_cb=spy_error)
        ack = "1700000000000000000"
        forged = [  # (reply, whether the server lets it through at all)
            (f"$JS.ACK.{NAMES.stream}.NOTYOURS.1.16.16.{ack}.0", False),
            (f"$JS.ACK.OTHER_STREAM.{pulled.name}.1.5000.16.{ack}.0", False),
            ("", True),
            ("_INBOX_viewer.reply", True),
        ]
        for n, (reply, _) in enumerate(forged):
            await spy.publish(inbox, _event("evil-tenant", n), reply=reply)
        await spy.flush()
        delivered = 15 + 15 + sum(through for _, through in forged)
        await until(lambda: victim.dropped >= delivered, 20.0, "the forced deliveries to arrive")
        # nats-server itself refuses a forged JetStream acknowledgement subject as a reply, even to a privileged
        # user; the viewer's own checks do not rely on that.
        assert sum("publish with reply" in e for e in refused) == 2, refused
        await asyncio.sleep(0.5)
        after = await asyncio.to_thread(victim.database)
        assert after == before, "a forced delivery changed the victim's database"

        # The real events that follow are all stored, in order.
        await asyncio.to_thread(sim.emit, 5)
        await publish_events(sim, hub, 20)
        await until(lambda: victim.stored >= 20, what="the next real events")
        await victim.monitor.stop()
        await hostile.close()
        await spy.close()

    asyncio.run(go())
    ids, position, rejected, gaps = database(tmp_path / "victim")
    assert ids == reference_ids(sim, 20)
    assert position == "hub:20" and rejected == 0 and gaps == []


def test_a_stream_sequence_that_jumps_is_a_gap_marker(simulator, hub_with_spy, tmp_path):
    sim, hub = simulator, hub_with_spy
    sim.emit(15)

    async def go() -> None:
        victim = await victim_after(sim, hub, tmp_path / "victim", 15)
        await victim.monitor.stop()
        await asyncio.to_thread(sim.emit, 5)
        await publish_events(sim, hub, 20)
        spy = await nats.connect(hub.urls, user="spy", password=SPY)
        for seq in (17, 18):  # gone from the hub before the viewer read them
            await spy.jetstream().delete_msg(NAMES.stream, seq)
        await spy.close()
        victim = Victim(hub, tmp_path / "victim")
        await victim.monitor.start()
        await until(lambda: victim.stored >= 3, what="the events after the jump")
        await victim.monitor.stop()

    asyncio.run(go())
    ids, position, rejected, gaps = database(tmp_path / "victim")
    every = reference_ids(sim, 20)
    assert ids == every[:16] + every[18:]
    assert position == "hub:20" and rejected == 0
    assert gaps == ["the hub skipped messages 17–18: events may be missing here"]


def test_a_viewer_of_some_types_keeps_a_gap_marker_for_messages_removed_on_the_hub(
    simulator, hub_with_spy, tmp_path
):
    """Reading some event types, a jump in stream sequence is normal (the other types sit between): messages
    removed on the hub while the viewer was away are found by asking the hub before reading on."""
    sim, hub = simulator, hub_with_spy
    sim.emit(15)
    chosen = ("user.created", "user.deleted", "user.updated")

    async def go() -> None:
        nc = await nats.connect(hub.urls, user="spy", password=SPY)
        await publish_events(sim, hub, 15)
        js = nc.jetstream()
        types = [NAMES.kind_of((await js.get_msg(NAMES.stream, seq)).subject or "") for seq in range(1, 16)]
        wanted = sum(t in chosen for t in types)
        victim = await victim_after(sim, hub, tmp_path / "victim", 15, wanted, event_types=chosen)
        await victim.monitor.stop()
        await asyncio.to_thread(sim.emit, 5)
        await publish_events(sim, hub, 20)
        for seq in (17, 18):
            await js.delete_msg(NAMES.stream, seq)
        await nc.close()
        victim = Victim(hub, tmp_path / "victim", chosen)
        await victim.monitor.start()
        await until(lambda: len(database(tmp_path / "victim")[3]) >= 1, what="the gap marker")
        await victim.monitor.stop()

    asyncio.run(go())
    ids, _, rejected, gaps = database(tmp_path / "victim")
    assert gaps == [
        "the hub removed 2 message(s) between 17 and 18: events of the chosen types may be missing here"
    ]
    assert rejected == 0 and ids and set(ids) <= set(reference_ids(sim, 20))


@pytest.mark.expect_warning_logs  # the rejected events are logged
def test_events_of_another_tenant_in_the_stream_are_rejected_rows(simulator, hub_with_spy, tmp_path):
    """What a misconfigured collector (two tenants relayed under one hub name) or a forger with write access puts
    in the stream: an event whose xtenant or source names another tenant than the database holds is kept as a
    rejected row, never as the tenant's event; an oversized one is cut as the direct stream cuts it."""
    sim, hub = simulator, hub_with_spy
    sim.emit(5)

    async def go() -> None:
        await publish_events(sim, hub, 5)
        spy = await nats.connect(hub.urls, user="spy", password=SPY)
        js = spy.jetstream()
        await js.publish(NAMES.event_subject("user.deleted"), _event("evil-tenant", 1))
        await js.publish(
            NAMES.event_subject("user.deleted"), _event("demo-tenant", 2, "urn:sim:evil.example")
        )
        await js.publish(NAMES.event_subject("user.deleted"), b'{"x": "' + b"y" * 900_000 + b'"}')
        huge = RejectedPayload(
            event_name="user.created", offset=None, reason="r" * 5000, raw="z" * 900_000, received_at=0.0
        )
        await js.publish(NAMES.rejected_subject, huge.to_bytes())
        await spy.close()
        victim = Victim(hub, tmp_path / "victim")
        await victim.monitor.start()
        await until(lambda: victim.stored >= 5 and victim.monitor.stats.rejected >= 4, what="all 9 messages")
        await victim.monitor.stop()

    asyncio.run(go())
    ids, position, rejected, gaps = database(tmp_path / "victim")
    assert ids == reference_ids(sim, 5) and position == "hub:9" and rejected == 4 and gaps == []
    db = tmp_path / "victim" / "tenants" / "victim.sqlite3"
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        rows = conn.execute("SELECT reason, length(raw) FROM rejected ORDER BY rowid").fetchall()
    assert "xtenant 'evil-tenant' is not this database's tenant 'demo-tenant'" in rows[0][0]
    assert "source 'urn:sim:evil.example' is not this database's tenant" in rows[1][0]
    assert rows[2][1] == rows[3][1] == 64 * 1024, rows  # as much as the direct stream keeps of a frame
    assert len(rows[3][0]) == 1000
