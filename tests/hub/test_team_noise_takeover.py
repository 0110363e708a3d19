"""Exceptions and silences through a relay takeover, on a real nats-server with relays --alerts-to one JSON webhook
(pytest-httpserver through Apprise): a silence a viewer made on the hub before the takeover holds every delivery
of the relay that takes the lease (its alerts still stored), and a rule's exception still keeps the events it
names from firing there — live, and for a backlog the new leader evaluates as a catch-up (events the collector
stored on the hub after the catch-up age: their age is judged when the hub stored them)."""

from __future__ import annotations

import asyncio
import os
import time

import pytest

from helpers.fixtures_team_buckets import TeamBuckets
from helpers.hub_cli import relay as collector_relay
from helpers.team_alerts import (
    Receiver,
    leader,
    relay,
    settled,
    take_over,
    team_destination,
    two_relays,
    wait_until,
)
from tenant_events.hub.connection import connect
from tenant_events.hub.silences import SilenceBoard
from tenant_events.paths import AppPaths
from tenant_events.settings import load_settings, save_settings
from tenant_events.settings.silences_file import SilenceBook, new_silence
from tenant_events.store.alerts_inbox import AlertInbox

REAL = os.environ.get("TENANT_EVENTS_REAL_KEYRING") == "1"
pytestmark = [
    pytest.mark.hub,
    pytest.mark.dbus,
    pytest.mark.skipif(not REAL, reason="needs ./run test (gnome-keyring on D-Bus)"),
]
CATCH_UP_MINUTES = 0.1  # events older than 6 s when evaluated are a catch-up
RULES = [
    {"id": "off-hours", "enabled": False},
    {
        "id": "each-group",
        "name": "Group created",
        "types": ["group.created"],
        "severity": "critical",
        "coalesce_minutes": 0,
    },
    {
        "id": "deletions",
        "name": "Deletion",
        "types": ["user.deleted", "group.deleted"],
        "severity": "critical",
        "coalesce_minutes": 0,
        "except": [
            {"field": "object.id", "op": "exists"}
        ],  # groups (they have an `id`; users a `user_id`) may go
    },
]


def _silence_on_hub(hub, rule: str) -> str:
    """A viewer silences `rule` for the team (what its app or `silences add --tenant` writes); the silence's id."""
    buckets = TeamBuckets(hub)

    async def go() -> str:
        nc = await connect(buckets.options("viewer"), reconnect=False)
        board = await SilenceBoard.open(
            nc.jetstream(timeout=5.0), buckets.names, buckets.options("viewer").auth
        )
        silence = new_silence(duration_s=3600, author="viewer", rule=rule, comment="expected: the re-org")
        await board.put(silence)
        await nc.close()
        return silence.id

    return asyncio.run(go())


def _holds(data_dir, silence_id: str) -> bool:
    """The relay of `data_dir` keeps the team's silence in its silences file."""
    book = SilenceBook.of(AppPaths.resolve(str(data_dir)))
    return any(s.id == f"hub-{silence_id}" for s in book.active())


def _titles(receiver: Receiver) -> list[str]:
    return [str(b.get("title")) for b in receiver.bodies]


def _emit(sim, n: int) -> None:
    for kind in ("group.created", "group.deleted", "user.deleted"):
        sim.emit(n, [kind])


def _type_counts(db) -> list[tuple[str, bool, dict[str, int]]]:
    with AlertInbox(db) as inbox:
        return [(a.rule_id, a.catch_up, dict(a.type_counts)) for a in inbox.alerts()]


def test_a_silence_and_an_exception_from_before_a_takeover_hold_the_new_leaders_alerts(
    make_simulator, nats_single, tmp_path, httpserver
):
    with two_relays(make_simulator, nats_single, tmp_path, httpserver, rules=RULES) as (
        sim,
        receiver,
        dirs,
        relays,
    ):
        silence = _silence_on_hub(nats_single, "each-group")
        lead = dirs[relays.index(leader(relays))]
        wait_until(lambda: _holds(lead, silence), "the silence at the leader", relays)
        _emit(sim, 2)
        wait_until(lambda: len(receiver.distinct()) >= 2, "the leader's deliveries", relays)
        standby, survivor = take_over(relays, dirs, 2, kind="user.deleted", stop=False)
        assert _holds(dirs[relays.index(standby)], silence)  # the team's silences before its first delivery
        _emit(sim, 3)
        for kind in ("user.deleted", "group.created", "group.deleted"):
            wait_until(lambda k=kind: settled(survivor, 5, k), f"the new leader's {kind} settled", relays)
        assert standby.stop() == 0, standby.text()
    titles = _titles(receiver)
    assert len(receiver.distinct()) == 5 and all("Deletion" in t for t in titles), titles
    stored = _type_counts(survivor)
    groups = [c for rule, _, c in stored if rule == "each-group"]
    assert len(groups) >= 3  # its alerts after the takeover are stored (and listed, dimmed), never delivered
    deletions = [c for rule, _, c in stored if rule == "deletions"]
    assert len(deletions) >= 3 and all(set(c) == {"user.deleted"} for c in deletions), deletions


def test_a_backlog_the_new_leader_evaluates_as_a_catch_up_honours_them_too(
    make_simulator, nats_single, tmp_path, httpserver
):
    sim = make_simulator(heartbeat=0.2, rate=0)
    token = sim.mint_token(ttl=3600)
    receiver = Receiver(httpserver)
    dirs = [tmp_path / "collector", tmp_path / "relay-b"]
    with team_destination(dirs, receiver.url, RULES) as name:
        paths = AppPaths.resolve(str(dirs[1]))
        settings = load_settings(paths)
        settings.alerts.catch_up_after_minutes = CATCH_UP_MINUTES
        save_settings(paths, settings)
        _emit(sim, 3)  # while no relay runs: a backlog, older than the catch-up age when the hub stores it
        emitted = time.monotonic()
        procs: list = []
        try:
            wait_until(
                lambda: time.monotonic() - emitted > CATCH_UP_MINUTES * 60 + 2, "the catch-up age", procs
            )
            first = collector_relay(sim, nats_single, token, dirs[0])  # collects, evaluates nothing
            procs.append(first)
            leader(procs)
            silence = _silence_on_hub(nats_single, "each-group")
            wait_until(lambda: _hub_holds(nats_single) >= 9, "the backlog on the hub", procs)
            first.kill()
            procs.append(relay(sim, nats_single, token, dirs[1], name))
            procs[-1].wait_for("leader: holds the lease", timeout=60)
            db = dirs[1] / "tenants" / "acme-team.sqlite3"
            for kind in ("user.deleted", "group.created", "group.deleted"):
                wait_until(lambda k=kind: settled(db, 3, k), f"the catch-up's {kind} settled", procs)
            assert _holds(dirs[1], silence)
            assert procs[-1].stop() == 0, procs[-1].text()
        finally:
            for p in procs:
                if p.proc.poll() is None:
                    p.stop()
    stored = _type_counts(db)
    assert ("each-group", True, {"group.created": 3}) in stored, stored  # one summary, stored, not delivered
    assert [c for rule, _, c in stored if rule == "deletions"] == [{"user.deleted": 3}], stored
    titles = _titles(receiver)
    assert len(titles) == 1 and "Deletion" in titles[0], titles


def _hub_holds(hub) -> int:
    """How many events the hub's stream holds for acme."""
    buckets = TeamBuckets(hub)

    async def go() -> int:
        nc = await connect(buckets.options("viewer"), reconnect=False)
        try:
            info = await nc.jetstream(timeout=5.0).stream_info(buckets.names.stream)
            return int(info.state.messages)
        finally:
            await nc.close()

    return asyncio.run(go())
