"""A hostile viewer against the hub's shared state, on a real nats-server running packaging/nats/accounts.conf as
it ships: the viewer client here is written for the test (raw nats-py, its own user and inbox prefix, the
documented permissions), and does what a person holding a viewer's password could do.

  - a rollup (`Nats-Rollup: all` or `sub`) under its own triage key, or any key of another bucket, wipes nothing:
    the team's triage, the cursor, the lease and the relays' delivery record stay as they were;
  - it can make no durable consumer, nor an ephemeral one that outlives 10 idle minutes;
  - it cannot fill the hub: each bucket and the alert stream hold a bounded number of bytes, each value a bounded
    size, and what others wrote is never evicted to make room (the triage bucket refuses new writes instead);
  - it reaches one tenant only;
  - a watch of a large triage bucket sees every later update (flow control is allowed where a watch needs it);
  - a hub set up before the guard is guarded by the next relay, its entries kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil

import nats
import nats.errors
import nats.js.errors
import pytest
from nats.js.api import KeyValueConfig

from helpers.hostile_viewer import hostile
from tenant_events.hub.connection import HubAuth, HubOptions, connect
from tenant_events.hub.provision import CONSUMER_IDLE_MAX, StreamPlan, provision
from tenant_events.hub.subjects import CURSOR_KEY, LEASE_KEY, HubNames
from tenant_events.hub.team_alerts import alerts_stream, outbox_bucket
from tenant_events.hub.triage import TriageBoard, alert_key, triage_bucket

pytestmark = pytest.mark.hub
NAMES = HubNames("acme")
ALERT = alert_key("mass-deletion", "evt_a")
DELIVERY = f"{ALERT}.1.dhook"
NOTE = "looked at it; " * 30  # a note of 420 characters: a watch of 6,000 of them needs flow control


def _options(hub, user: str) -> HubOptions:
    return HubOptions(tuple(hub.urls.split(",")), HubAuth("password", user, getattr(hub.credentials, user)))


async def _state(js) -> dict[str, bytes | None]:
    """Every entry the relays and the team keep, as it is now (None: gone)."""
    out: dict[str, bytes | None] = {}
    for bucket, key in (
        (NAMES.cursor_bucket, CURSOR_KEY),
        (NAMES.lease_bucket, LEASE_KEY),
        (outbox_bucket(NAMES), DELIVERY),
        (triage_bucket(NAMES), f"{ALERT}.viewer2"),
    ):
        kv = await js.key_value(bucket)
        try:
            out[bucket] = (await kv.get(key)).value
        except nats.js.errors.KeyNotFoundError:
            out[bucket] = None
    return out


def test_a_viewers_rollup_wipes_nothing_and_the_relays_state_stays(nats_single):
    hub = nats_single

    async def go() -> None:
        collector = await connect(_options(hub, "collector"), reconnect=False)
        js = collector.jetstream(timeout=5.0)
        await provision(js, NAMES, StreamPlan(lease_ttl=600.0))
        await (await js.key_value(NAMES.cursor_bucket)).put(CURSOR_KEY, b'{"cursor": "c-42"}')
        await (await js.key_value(NAMES.lease_bucket)).create(LEASE_KEY, b'{"holder": "relay-a"}')
        await (await js.key_value(outbox_bucket(NAMES))).put(DELIVERY, b'{"state": "delivered"}')
        bo = await connect(_options(hub, "viewer2"), reconnect=False)
        await (await TriageBoard.open(bo.jetstream(), NAMES, _options(hub, "viewer2").auth)).put(
            ALERT, "acknowledged", "mine"
        )
        before = await _state(js)
        assert all(before.values()), before

        async with hostile(hub) as ana:
            outcomes = {}
            for rollup in ("all", "sub"):
                # under its own triage key, a subject it may publish to
                own = f"$KV.{triage_bucket(NAMES)}.x.y.viewer"
                outcomes[own, rollup] = await ana.publish(own, b"", {"Nats-Rollup": rollup})
                for bucket in (NAMES.cursor_bucket, NAMES.lease_bucket, outbox_bucket(NAMES)):
                    subject = f"$KV.{bucket}.x.y.viewer"  # the key shape it may write in its own bucket
                    outcomes[subject, rollup] = await ana.publish(subject, b"", {"Nats-Rollup": rollup})
            purge = await ana.request(f"$JS.API.STREAM.PURGE.KV_{outbox_bucket(NAMES)}", {})
            after = await _state(js)
        print(outcomes)
        assert after == before, f"a viewer's rollup wiped hub state: {outcomes}"
        assert all(o != "stored" for o in outcomes.values()), outcomes
        assert outcomes[f"$KV.{triage_bucket(NAMES)}.x.y.viewer", "all"] == "rollup not permitted"
        assert purge is None
        await bo.close()
        await collector.close()

    asyncio.run(go())


def test_a_viewer_makes_no_durable_consumer_nor_one_that_outlives_it(nats_single):
    hub = nats_single

    async def go() -> None:
        collector = await connect(_options(hub, "collector"), reconnect=False)
        await provision(collector.jetstream(), NAMES, StreamPlan())
        durable: dict[str, object] = {"ack_policy": "none", "durable_name": "forever"}
        async with hostile(hub) as ana:
            for stream in (NAMES.stream, alerts_stream(NAMES), f"KV_{triage_bucket(NAMES)}"):
                body = {"stream_name": stream, "config": durable}
                answers = [
                    await ana.request(f"$JS.API.CONSUMER.DURABLE.CREATE.{stream}.forever", body),
                    await ana.request(f"$JS.API.CONSUMER.CREATE.{stream}.forever", body),
                    await ana.request(f"$JS.API.CONSUMER.CREATE.{stream}.forever.>", body),
                    await ana.request(f"$JS.API.CONSUMER.CREATE.{stream}", body),
                ]
                assert answers[:3] == [None, None, None], answers  # refused by the permissions
                assert answers[3] is not None and "error" in answers[3], answers  # "expected to be ephemeral"
                year = {"stream_name": stream, "config": {"ack_policy": "none", "inactive_threshold": 3.2e16}}
                long_lived = await ana.request(f"$JS.API.CONSUMER.CREATE.{stream}", year)
                assert long_lived is not None and "error" in long_lived, long_lived
                plain = await ana.request(
                    f"$JS.API.CONSUMER.CREATE.{stream}",
                    {"stream_name": stream, "config": {"ack_policy": "none"}},
                )
                assert plain is not None and "error" not in plain, plain
                config = plain["config"]
                assert isinstance(config, dict)
                assert 0 < int(config["inactive_threshold"]) <= CONSUMER_IDLE_MAX * 1e9, config
        for stream in (NAMES.stream, alerts_stream(NAMES), f"KV_{triage_bucket(NAMES)}"):
            with pytest.raises(nats.js.errors.NotFoundError):  # no durable was made by any form
                await collector.jetstream(timeout=5.0).consumer_info(stream, "forever")
        await collector.close()

    asyncio.run(go())


def test_a_viewer_cannot_fill_the_hub_nor_evict_what_others_wrote(nats_single):
    hub, limit = nats_single, 256 * 1024

    async def go() -> dict[str, object]:
        collector = await connect(_options(hub, "collector"), reconnect=False)
        js = collector.jetstream(timeout=5.0)
        await provision(js, NAMES, StreamPlan())
        for stream in (
            f"KV_{NAMES.cursor_bucket}",
            f"KV_{NAMES.lease_bucket}",
            f"KV_{triage_bucket(NAMES)}",
            f"KV_{outbox_bucket(NAMES)}",
            alerts_stream(NAMES),
        ):
            config = (await js.stream_info(stream)).config
            assert (config.max_bytes or -1) > 0 and (config.max_msg_size or -1) > 0, config
            assert not config.allow_rollup_hdrs, config
        bo = await connect(_options(hub, "viewer2"), reconnect=False)
        await (await TriageBoard.open(bo.jetstream(), NAMES, _options(hub, "viewer2").auth)).put(
            ALERT, "acknowledged", "mine"
        )
        # the bucket's limit made small (an operator's choice is kept), so one viewer can fill it here
        stream = f"KV_{triage_bucket(NAMES)}"
        config = (await js.stream_info(stream)).config
        config.max_bytes = limit
        await js.update_stream(config)
        await provision(js, NAMES, StreamPlan())
        refused = 0
        async with hostile(hub) as ana:
            big = await ana.publish(f"$KV.{triage_bucket(NAMES)}.big.one.viewer", b"x" * 200_000, {})
            note = b"n" * 3000
            for i in range(2 * limit // len(note)):
                outcome = await ana.publish(f"$KV.{triage_bucket(NAMES)}.r{i}.e.viewer", note, {})
                refused += outcome != "stored"
        info = await js.stream_info(stream)
        try:
            others: bytes | None = (
                await (await js.key_value(triage_bucket(NAMES))).get(f"{ALERT}.viewer2")
            ).value
        except nats.js.errors.KeyNotFoundError:
            others = None
        await bo.close()
        await collector.close()
        return {"big": big, "stored_bytes": info.state.bytes, "others": others, "refused": refused}

    result = asyncio.run(go())
    assert result["big"] != "stored" and "maximum" in str(result["big"]), result
    assert int(result["stored_bytes"]) <= limit, result  # type: ignore[call-overload]
    assert result["others"] is not None, result  # nothing evicted to make room
    assert int(result["refused"]) > 0, result  # type: ignore[call-overload]


def test_a_viewer_reaches_one_tenant_only(nats_single):
    hub, other = nats_single, HubNames("globex")

    async def go() -> None:
        collector = await connect(_options(hub, "collector"), reconnect=False)
        await provision(collector.jetstream(), other, StreamPlan())
        async with hostile(hub) as ana:
            info = await ana.request(f"$JS.API.STREAM.INFO.{other.stream}", {})
            write = await ana.publish(f"$KV.{triage_bucket(other)}.r.e.viewer", b"{}", {})
            await asyncio.sleep(0.3)
            refused = ana.refused()
        assert info is None and write == "no answer"
        assert any(other.stream.lower() in r for r in refused), refused
        await collector.close()

    asyncio.run(go())


def test_a_watch_of_a_large_triage_bucket_sees_every_later_update(nats_single):
    hub, early, later = nats_single, 6000, 3000

    async def go() -> None:
        collector = await connect(_options(hub, "collector"), reconnect=False)
        await provision(collector.jetstream(), NAMES, StreamPlan())
        writer_nc = await connect(_options(hub, "viewer"), reconnect=False)
        writer = await TriageBoard.open(
            writer_nc.jetstream(timeout=10.0), NAMES, _options(hub, "viewer").auth
        )

        async def write(first: int, count: int) -> None:
            for start in range(first, first + count, 200):
                await asyncio.gather(
                    *(
                        writer.put(f"r{i}.e", "acknowledged", NOTE)
                        for i in range(start, min(start + 200, first + count))
                    )
                )

        await write(0, early)
        reader_nc = await connect(_options(hub, "viewer2"), reconnect=False)
        reader = await TriageBoard.open(
            reader_nc.jetstream(timeout=10.0), NAMES, _options(hub, "viewer2").auth
        )
        seen: set[str] = set()
        all_seen = asyncio.Event()

        def arrived(entry) -> None:
            seen.add(entry.alert)
            if len(seen) == early + later:
                all_seen.set()

        reader.on_change.append(arrived)
        await reader.start()
        await write(early, later)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(all_seen.wait(), 60)
        missing = early + later - len(seen)
        await reader.stop()
        for nc in (reader_nc, writer_nc, collector):
            await nc.close()
        assert missing == 0, f"the watch saw {len(seen)} of {early + later} entries"

    asyncio.run(go())


def test_a_hub_set_up_before_the_guard_is_guarded_by_the_next_relay_and_keeps_its_entries(nats_single):
    hub = nats_single

    async def go() -> None:
        collector = await connect(_options(hub, "collector"), reconnect=False)
        js = collector.jetstream(timeout=5.0)
        # the buckets as an older relay made them: nats-py's defaults (rollups allowed, no limits)
        for bucket in (NAMES.cursor_bucket, triage_bucket(NAMES), outbox_bucket(NAMES)):
            await js.create_key_value(KeyValueConfig(bucket=bucket, history=16 if "TRIAGE" in bucket else 1))
        await js.create_key_value(KeyValueConfig(bucket=NAMES.lease_bucket, ttl=5.0))
        await (await js.key_value(triage_bucket(NAMES))).put(f"{ALERT}.viewer2", b'{"state": "open"}')
        made = await provision(js, NAMES, StreamPlan())
        async with hostile(hub) as ana:
            outcome = await ana.publish(f"$KV.{triage_bucket(NAMES)}.x.y.viewer", b"", {"Nats-Rollup": "all"})
        assert outcome == "rollup not permitted"
        entry = await (await js.key_value(triage_bucket(NAMES))).get(f"{ALERT}.viewer2")
        assert entry.value == b'{"state": "open"}'
        assert made.unguarded == () and made.warning is None
        for bucket in (NAMES.cursor_bucket, NAMES.lease_bucket, triage_bucket(NAMES), outbox_bucket(NAMES)):
            config = (await js.stream_info(f"KV_{bucket}")).config
            assert not config.allow_rollup_hdrs and config.deny_purge and (config.max_bytes or -1) > 0, config
        await collector.close()

    asyncio.run(go())


@pytest.mark.expect_warning_logs  # the refused update is logged
def test_a_collector_that_may_not_update_streams_is_told_what_to_give_it(tmp_path):
    """An accounts.conf from before the guard (collectors could create streams, not update them): the relay
    still runs, and says which streams are unguarded and what permission to add."""
    from helpers.nats_hub import CONFIG_DIR, start_single

    shutil.copy(CONFIG_DIR / "hub.conf", tmp_path / "hub.conf")
    accounts = (CONFIG_DIR / "accounts.conf").read_text()
    old = accounts.replace('"$JS.API.STREAM.UPDATE.*",', "")
    assert old != accounts
    (tmp_path / "accounts.conf").write_text(old)
    hub = start_single(tmp_path / "nats", config=tmp_path / "hub.conf")
    try:

        async def go() -> None:
            async with hostile(hub, "collector") as collector:
                made = await provision(collector.nc.jetstream(timeout=1.0), NAMES, StreamPlan())
            assert len(made.unguarded) == 7, made.unguarded  # the silences bucket too
            assert made.warning is not None and "$JS.API.STREAM.UPDATE.*" in made.warning
            assert f"KV_{triage_bucket(NAMES)}" in made.warning

        asyncio.run(go())
    finally:
        hub.stop()
