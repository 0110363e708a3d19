"""Shared triage on a real nats-server with the documented permissions (packaging/nats/accounts.conf): what one
viewer sets is seen by the others within 1 s, "by" is the hub user of the connection that wrote it (a viewer
cannot write in another's name, whatever its payload says), and a viewer still cannot publish events or alerts."""

from __future__ import annotations

import asyncio
import dataclasses
import time

import orjson
import pytest

from helpers.fixtures_team_buckets import raw_viewer
from helpers.fixtures_team_buckets import until as _until
from helpers.nats_hub import Credentials
from helpers.nats_late_hop import LateHop
from helpers.slack import bound
from tenant_events.hub.connection import connect
from tenant_events.hub.triage import TriageBoard, alert_key, triage_bucket

pytestmark = pytest.mark.hub


def test_triage_set_by_one_viewer_is_seen_by_others_within_a_second_and_cannot_be_forged(team_buckets):
    hub, names = team_buckets.hub, team_buckets.names
    assert isinstance(hub.credentials, Credentials)
    alert = alert_key("mass-deletion", "evt_AbC123")

    async def go() -> None:
        collector = await team_buckets.provisioned()  # the relay's set-up makes the bucket too
        ana_nc, ana = await team_buckets.board(TriageBoard, "viewer")
        bo_nc, bo = await team_buckets.board(TriageBoard, "viewer2")
        lead_nc, lead = await team_buckets.board(
            TriageBoard, "viewer2"
        )  # bo's second computer: a third viewer
        seen: dict[str, float] = {}
        for name, board in (("viewer2", bo), ("viewer2-laptop", lead)):
            board.on_change.append(lambda e, n=name: seen.setdefault(n, time.monotonic()))
        started = time.monotonic()
        await ana.put(alert, "acknowledged", "looking into it")
        await _until(lambda: len(seen) == 2)
        assert set(seen) == {"viewer2", "viewer2-laptop"}
        assert max(seen.values()) - started < 1.0, seen
        current = bo.current(alert)
        assert current is not None and (current.by, current.state, current.note) == (
            "viewer",
            "acknowledged",
            "looking into it",
        )
        # the last write wins; the history keeps both
        await bo.put(alert, "resolved", "expected")
        await _until(lambda: (c := ana.current(alert)) is not None and c.state == "resolved")
        assert ana.current(alert).by == "viewer2"
        assert [(e.by, e.state) for e in await ana.history(alert)] == [
            ("viewer", "acknowledged"),
            ("viewer2", "resolved"),
        ]

        # forging: ana writes under bo's name (the payload claims bo too) — the server refuses it
        raw, errors = await raw_viewer(hub)
        forged = orjson.dumps(
            {"state": "resolved", "note": "nothing to see", "at": time.time(), "by": "viewer2"}
        )
        await raw.publish(f"$KV.{triage_bucket(names)}.{alert}.viewer2", forged)
        await raw.publish(names.event_subject("user.deleted"), b"{}")  # an event
        await raw.publish("tenant-events.acme.alerts", b"{}")  # an alert
        await raw.publish(f"$KV.{names.cursor_bucket}.cursor", b"{}")  # the collector's cursor
        await asyncio.sleep(0.5)
        refused = [str(e).lower() for e in errors if "permissions violation" in str(e).lower()]
        assert any(f"{alert}.viewer2".lower() in e for e in refused), errors
        assert any("tenant-events.acme.user.deleted" in e for e in refused), errors
        assert any("tenant-events.acme.alerts" in e for e in refused), errors
        assert any("tenant_events_acme_cursor.cursor" in e for e in refused), errors
        assert bo.current(alert).note == "expected"  # nothing forged arrived
        for board in (ana, bo, lead):
            await board.stop()
        for nc in (raw, ana_nc, bo_nc, lead_nc, collector):
            await nc.close()

    asyncio.run(go())


def test_two_viewers_databases_share_the_triage_and_a_late_alert_gets_it_when_raised(team_buckets, tmp_path):
    from helpers.deliveries import alert_write, store_alerts
    from tenant_events.store import AlertInbox
    from tenant_events.store.alert_triage import AlertTriage
    from tenant_events.tenant.team_triage import start_mirror

    ana_db, bo_db, late_db = tmp_path / "ana.sqlite3", tmp_path / "bo.sqlite3", tmp_path / "late.sqlite3"
    [ana_alert] = store_alerts(ana_db, [alert_write()])  # the same events: the same alert (rule, first event)
    store_alerts(bo_db, [alert_write("other-rule"), alert_write()])  # another local id for it
    store_alerts(late_db, [alert_write("other-rule")])  # has not raised it yet

    async def go() -> None:
        collector = await team_buckets.provisioned()
        ana = await start_mirror(ana_db, team_buckets.options("viewer"), "acme")
        bo = await start_mirror(bo_db, team_buckets.options("viewer2"), "acme")
        late = await start_mirror(late_db, team_buckets.options("viewer2"), "acme")
        with AlertTriage(ana_db) as triage:  # what the inbox does: locally, then to the hub
            made = triage.set(ana_alert, "acknowledged", "viewer", "looking into it")
        started = time.monotonic()
        await ana.publish(ana_alert, "acknowledged", "looking into it", at=made.at)
        await _until(lambda: bo.applied == 1)
        assert time.monotonic() - started < 1.0
        with AlertTriage(bo_db) as triage:
            [entry] = triage.history(2)
            assert (entry.state, entry.by, entry.note) == ("acknowledged", "viewer", "looking into it")
        with AlertInbox(bo_db) as inbox:
            assert inbox.unread_count() == 1  # only its other alert still needs someone
        # The late viewer's copy arrives on its own subscription, maybe a moment after the other viewer's.
        await _until(lambda: list(late.pending) == ["mass-deletion.evt_a"])
        assert late.applied == 0
        store_alerts(late_db, [alert_write()])  # its rules catch up and raise the alert
        late.retry()
        assert late.applied == 1
        await ana.publish(
            ana_alert, "acknowledged", "looking into it"
        )  # seen again: not a second history line
        await asyncio.sleep(0.3)
        with AlertTriage(ana_db) as triage:
            assert len(triage.history(ana_alert)) == 2  # its own write, and the hub's copy of the second
        for mirror in (ana, bo, late):
            await mirror.stop()
        await collector.close()

    asyncio.run(go())


def test_an_alerts_triage_history_is_whole_when_the_hub_delivers_it_after_saying_none_pending(team_buckets):
    """A viewer reading an alert's triage history from a hub that hands it the entries only after answering that
    nothing was pending any more (the order a loaded machine gave) gets every person's every kept entry."""
    alert = alert_key("mass-deletion", "evt_AbC123")
    written = [("viewer", "acknowledged"), ("viewer", "snoozed"), ("viewer", "open"), ("viewer2", "resolved")]

    async def go() -> tuple[list[tuple[str, str]], int]:
        collector = await team_buckets.provisioned()
        ana_nc, ana = await team_buckets.board(TriageBoard, "viewer")
        bo_nc, bo = await team_buckets.board(TriageBoard, "viewer2")
        for by, state in written:
            await (ana if by == "viewer" else bo).put(alert, state)
        await _until(lambda: len(ana.entries) == 2, what="both people's triage seen")
        try:
            async with LateHop(team_buckets.hub.urls) as hop:
                options = dataclasses.replace(team_buckets.options("viewer"), urls=(hop.url,))
                late_nc = await connect(options, reconnect=False)
                try:
                    late = await TriageBoard.open(
                        late_nc.jetstream(timeout=2.0), team_buckets.names, options.auth
                    )
                    # who triaged it, as the board's own watch tells it (read here from another board: the hop
                    # reorders one watch, the history's)
                    late.entries.update(ana.entries)
                    history = await asyncio.wait_for(late.history(alert), bound(30))
                finally:
                    await late_nc.close()
                return [(e.by, e.state) for e in history], hop.reordered
        finally:
            for board in (ana, bo):
                await board.stop()
            for nc in (ana_nc, bo_nc, collector):
                await nc.close()

    history, reordered = asyncio.run(go())
    assert history == written
    assert reordered > 0  # the hub's answer came before the entries: the case under test
