"""Silences shared through the hub on a real nats-server with the documented permissions: one viewer's silence is
seen by another within 1 s, its author is the hub user that wrote it (a viewer cannot silence in another's name,
nor purge or roll up the bucket), a lift by a teammate is the newest entry, and the relay's mirror keeps the
team's silences in its silences file, where its deliveries honour them."""

from __future__ import annotations

import asyncio
import time

import nats
import pytest

from helpers.nats_hub import Credentials
from tenant_events.hub.connection import HubAuth, HubOptions, connect
from tenant_events.hub.provision import StreamPlan, provision
from tenant_events.hub.silences import SilenceBoard, silences_bucket
from tenant_events.hub.subjects import HubNames
from tenant_events.settings.silences_file import SilenceBook, new_silence
from tenant_events.tenant.team_silences import start_silences_mirror

pytestmark = pytest.mark.hub


def _options(hub, user: str) -> HubOptions:
    return HubOptions(tuple(hub.urls.split(",")), HubAuth("password", user, getattr(hub.credentials, user)))


async def _board(hub, names, user):
    nc = await connect(_options(hub, user), reconnect=False)
    board = await SilenceBoard.open(nc.jetstream(timeout=2.0), names, _options(hub, user).auth)
    await board.start()
    return nc, board


async def _until(predicate, wait_s=10.0):
    deadline = time.monotonic() + wait_s
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.01)


def test_a_silence_reaches_a_second_viewer_within_a_second_and_cannot_be_forged(nats_single, tmp_path):
    hub, names = nats_single, HubNames("acme")
    assert isinstance(hub.credentials, Credentials)

    async def go() -> None:
        collector = await connect(_options(hub, "collector"), reconnect=False)
        await provision(collector.jetstream(), names, StreamPlan())
        ana_nc, ana = await _board(hub, names, "viewer")
        bo_nc, bo = await _board(hub, names, "viewer2")
        book = SilenceBook(tmp_path / "silences.json")
        mirror = await start_silences_mirror(book, _options(hub, "collector"), "acme", profile="acme-team")
        seen: list[float] = []
        bo.on_change.append(lambda s: seen.append(time.monotonic()))
        silence = new_silence(duration_s=3600, author="ignored", rule="org-connection", comment="onboarding")
        started = time.monotonic()
        await ana.put(silence)
        await _until(lambda: bool(seen))
        assert seen[0] - started < 1.0, seen[0] - started
        [got] = bo.all()
        assert (got.id, got.author, got.rule, got.comment) == (
            silence.id,
            "viewer",
            "org-connection",
            "onboarding",
        )
        # the relay's mirror holds it in its silences file, for its profile, with who made it
        await _until(lambda: any(s.id == f"hub-{silence.id}" for s in book.all()))
        [mirrored] = book.all()
        assert (mirrored.author, mirrored.tenant, mirrored.rule) == (
            "viewer (team)",
            "acme-team",
            "org-connection",
        )
        # bo lifts it: the newest entry wins everywhere
        await bo.put(_lifted(got))
        await _until(lambda: not ana.all()[0].active(time.time()))
        assert ana.all()[0].author == "viewer2"
        await _until(lambda: not book.all()[0].active(time.time()))

        # forging and purging: refused by the server
        errors: list[Exception] = []

        async def record(exc: Exception) -> None:
            errors.append(exc)

        raw = await nats.connect(
            hub.urls,
            user="viewer",
            password=hub.credentials.viewer,
            error_cb=record,
            inbox_prefix="_INBOX_viewer",
            allow_reconnect=False,
        )
        await raw.publish(f"$KV.{silences_bucket(names)}.forged.viewer2", b'{"starts_at": 0, "ends_at": 1}')
        await raw.flush()
        with pytest.raises(Exception):  # noqa: B017 (nats-py raises its own timeout for a refused request)
            await raw.request(f"$JS.API.STREAM.PURGE.KV_{silences_bucket(names)}", b"", timeout=1.0)
        await _until(lambda: bool(errors))
        assert "permissions violation" in str(errors[0]).lower()
        await asyncio.sleep(0.3)
        assert "forged" not in ana.silences
        info = await collector.jetstream().stream_info(f"KV_{silences_bucket(names)}")
        assert not info.config.allow_rollup_hdrs and info.config.deny_purge
        await raw.close()
        await mirror.stop()
        for nc, board in ((ana_nc, ana), (bo_nc, bo)):
            await board.stop()
            await nc.close()
        await collector.close()

    asyncio.run(go())


def _lifted(silence):
    import dataclasses

    return dataclasses.replace(silence, ends_at=time.time())
