"""Silences shared through the hub on a real nats-server with the documented permissions: one viewer's silence is
seen by another within 1 s, its author is the hub user that wrote it (a viewer cannot silence in another's name,
nor purge or roll up the bucket), a lift by a teammate is the newest entry, and the relay's mirror keeps the
team's silences in its silences file, where its deliveries honour them. `tenant-events silences add|remove` for
a tenant followed through the hub goes through the same path as the app (tenant/silences.py): the team has it
within a second of the command's return; a hub user the hub does not let write silences is refused and nothing
is kept."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import shutil
import sys
import time
import uuid

import pytest

from helpers.fixtures_team_buckets import TeamBuckets, raw_viewer, until
from helpers.nats_hub import CONFIG_DIR, Credentials, start_single
from helpers.nats_late_hop import LateHop
from tenant_events.errors import SignInRequired
from tenant_events.hub.silences import SilenceBoard, silences_bucket
from tenant_events.paths import AppPaths
from tenant_events.settings.silences_file import SilenceBook, new_silence
from tenant_events.tenant.silences import Silences
from tenant_events.tenant.team_silences import start_silences_mirror

pytestmark = pytest.mark.hub
REAL = os.environ.get("TENANT_EVENTS_REAL_KEYRING") == "1"


def test_a_silence_reaches_a_second_viewer_within_a_second_and_cannot_be_forged(team_buckets, tmp_path):
    hub, names = team_buckets.hub, team_buckets.names
    assert isinstance(hub.credentials, Credentials)

    async def go() -> None:
        collector = await team_buckets.provisioned()
        ana_nc, ana = await team_buckets.board(SilenceBoard, "viewer")
        bo_nc, bo = await team_buckets.board(SilenceBoard, "viewer2")
        book = SilenceBook(tmp_path / "silences.json")
        mirror = await start_silences_mirror(
            book, team_buckets.options("collector"), "acme", profile="acme-team"
        )
        seen: list[float] = []
        bo.on_change.append(lambda s: seen.append(time.monotonic()))
        silence = new_silence(duration_s=3600, author="ignored", rule="org-connection", comment="onboarding")
        started = time.monotonic()
        await ana.put(silence)
        await until(lambda: bool(seen))
        assert seen[0] - started < 1.0, seen[0] - started
        [got] = bo.all()
        assert (got.id, got.author, got.rule, got.comment) == (
            silence.id,
            "viewer",
            "org-connection",
            "onboarding",
        )
        # the relay's mirror holds it in its silences file, for its profile, with who made it
        await until(lambda: any(s.id == f"hub-{silence.id}" for s in book.all()))
        [mirrored] = book.all()
        assert (mirrored.author, mirrored.tenant, mirrored.rule) == (
            "viewer (team)",
            "acme-team",
            "org-connection",
        )
        # bo lifts it: the newest entry wins everywhere
        await bo.put(_lifted(got))
        await until(lambda: not ana.all()[0].active(time.time()))
        assert ana.all()[0].author == "viewer2"
        await until(lambda: not book.all()[0].active(time.time()))

        # forging and purging: refused by the server
        raw, errors = await raw_viewer(hub)
        await raw.publish(f"$KV.{silences_bucket(names)}.forged.viewer2", b'{"starts_at": 0, "ends_at": 1}')
        await raw.flush()
        with pytest.raises(Exception):  # noqa: B017 (nats-py raises its own timeout for a refused request)
            await raw.request(f"$JS.API.STREAM.PURGE.KV_{silences_bucket(names)}", b"", timeout=1.0)
        await until(lambda: bool(errors))
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


async def _cli(*args: str) -> tuple[int, str, str]:
    """`tenant-events ARGS` in a process of its own, as a user runs it beside the app."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tenant_events",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await proc.communicate()
    return int(proc.returncode or 0), out.decode(), err.decode()


@pytest.mark.dbus
@pytest.mark.skipif(not REAL, reason="needs ./run test (gnome-keyring on D-Bus)")
def test_the_command_line_shares_a_team_tenants_silence_and_its_lift_within_a_second(team_buckets, tmp_path):
    from tenant_events.auth.secret_store import open_secret_store
    from tenant_events.hub.credentials import add_hub_profile, remove_hub_profile

    hub = team_buckets.hub
    data = str(tmp_path / "ana")
    paths = AppPaths.resolve(data).ensure()
    store = open_secret_store().store
    name = f"acme-{uuid.uuid4().hex[:6]}"  # ana follows the hub tenant acme under this profile
    add_hub_profile(
        paths,
        store,
        hub.credentials.viewer,
        name=name,
        hub_urls=hub.urls.split(","),
        hub_tenant="acme",
        auth="password",
        user="viewer",
    )

    async def go() -> None:
        collector = await team_buckets.provisioned()
        bo_book = SilenceBook(tmp_path / "bo" / "silences.json")  # bo's app, following the team's silences
        bo = await start_silences_mirror(bo_book, team_buckets.options("viewer2"), "acme", profile="acme")
        assert bo.board is not None
        seen: dict[tuple[str, bool], float] = {}
        bo.board.on_change.append(lambda s: seen.setdefault((s.id, s.active(time.time())), time.monotonic()))

        code, out, err = await _cli(
            "silences", "add", "--tenant", name, "--rule", "org-connection", "--for", "1h",
            "--comment", "onboarding", "--data-dir", data,
        )  # fmt: skip
        returned = time.monotonic()
        assert code == 0, err
        ident = out.split()[0]
        assert ident.startswith("hub-"), out
        shared = ident.removeprefix("hub-")
        await until(lambda: (shared, True) in seen, 5, "the silence at bo's")
        assert seen[(shared, True)] - returned < 1.0, seen[(shared, True)] - returned
        [mine] = SilenceBook.of(paths).active()  # kept here as the team's copy: one entry, not two
        assert (mine.id, mine.author, mine.tenant, mine.rule) == (
            ident,
            "viewer (team)",
            name,
            "org-connection",
        )
        await until(lambda: bool(bo_book.active()), 5, "bo's silences file")
        [theirs] = bo_book.active()
        assert (theirs.id, theirs.author, theirs.tenant, theirs.comment) == (
            ident,
            "viewer (team)",
            "acme",
            "onboarding",
        )

        code, out, err = await _cli("silences", "remove", ident, "--data-dir", data)
        returned = time.monotonic()
        assert code == 0, err
        await until(lambda: (shared, False) in seen, 5, "the lift at bo's")
        assert seen[(shared, False)] - returned < 1.0, seen[(shared, False)] - returned
        await until(lambda: not bo_book.active(), 5, "the lift in bo's silences file")
        assert SilenceBook.of(paths).active() == []
        assert bo.board.silences[shared][1].author == "viewer"  # who lifted it: the hub's word
        await bo.stop()
        await collector.close()

    try:
        asyncio.run(go())
    finally:
        remove_hub_profile(paths, store, name)


@pytest.mark.expect_warning_logs  # the server's refusals are logged
def test_a_teammate_the_hub_does_not_let_silence_is_refused_and_nothing_changes(tmp_path):
    shutil.copy(CONFIG_DIR / "hub.conf", tmp_path / "hub.conf")
    accounts = (CONFIG_DIR / "accounts.conf").read_text()
    granted = '"$JS.FC.KV_TENANT_EVENTS_ACME_SILENCES.>",\n            "$KV.TENANT_EVENTS_ACME_SILENCES.*.viewer2" ]'
    assert accounts.count(granted) == 1
    (tmp_path / "accounts.conf").write_text(
        accounts.replace(
            granted, '"$JS.FC.KV_TENANT_EVENTS_ACME_SILENCES.>" ]'
        )  # viewer2 reads, never writes
    )
    hub = start_single(tmp_path / "nats", config=tmp_path / "hub.conf")
    buckets = TeamBuckets(hub)

    async def go() -> None:
        collector = await buckets.provisioned()
        bo_paths, ana_paths = (AppPaths.resolve(str(tmp_path / n)).ensure() for n in ("bo", "ana"))
        bo_mirror = await start_silences_mirror(
            SilenceBook.of(bo_paths), buckets.options("viewer2"), "acme", profile="acme"
        )
        ana_mirror = await start_silences_mirror(
            SilenceBook.of(ana_paths), buckets.options("viewer"), "acme", profile="acme"
        )
        bo = Silences(bo_paths, running=lambda p: bo_mirror if p == "acme" else None)
        ana = Silences(ana_paths, running=lambda p: ana_mirror if p == "acme" else None)
        wanted = new_silence(duration_s=3600, author="bo", rule="org-connection", tenant="acme")
        with pytest.raises(SignInRequired, match="does not let viewer2 silence acme's alerts"):
            await bo.add(wanted)
        assert bo.book.all() == []  # nothing kept: the team's silence is the team's
        # ana may: bo's app holds it; bo may not lift it for the team, and it still holds at bo's
        kept = await ana.add(dataclasses.replace(wanted, author="ana"))
        await until(lambda: [s.id for s in bo.book.active()] == [kept.id], 5, "ana's silence at bo's")
        with pytest.raises(SignInRequired, match="does not let viewer2"):
            await bo.lift(kept.id)
        assert [s.id for s in bo.book.active()] == [kept.id]
        # a silence of a tenant of bo's own (not followed through the hub) is bo's to make, as ever
        own = await bo.add(dataclasses.replace(wanted, tenant="lab"))
        assert own.id == wanted.id and own.author == "bo"
        for mirror in (bo_mirror, ana_mirror):
            await mirror.stop()
        await collector.close()

    try:
        asyncio.run(go())
    finally:
        hub.stop()


def _lifted(silence):
    return dataclasses.replace(silence, ends_at=time.time())


def test_a_mirror_started_holds_the_teams_silences_before_it_returns(team_buckets, tmp_path):
    """A relay taking the lease starts the mirror before it evaluates or delivers: what the bucket held is in its
    silences file by then, not a moment later."""

    async def go() -> None:
        collector = await team_buckets.provisioned()
        ana_nc, ana = await team_buckets.board(SilenceBoard, "viewer")
        made = [new_silence(duration_s=3600, author="ana", rule=f"rule-{i}") for i in range(20)]
        for silence in made:
            await ana.put(silence)
        book = SilenceBook(tmp_path / "silences.json")
        mirror = await start_silences_mirror(
            book, team_buckets.options("collector"), "acme", profile="acme-team"
        )
        assert sorted(s.id for s in book.active()) == sorted(f"hub-{s.id}" for s in made)
        await mirror.stop()
        await ana.stop()
        await ana_nc.close()
        await collector.close()

    asyncio.run(go())


def test_a_mirror_holds_the_teams_silences_when_the_hub_delivers_them_after_saying_none_pending(
    team_buckets, tmp_path
):
    """The same when the hub hands the mirror's watch its silences only after answering that nothing was pending
    any more (the order a loaded machine gave): the mirror still returns with every one of them kept."""

    async def go() -> None:
        collector = await team_buckets.provisioned()
        ana_nc, ana = await team_buckets.board(SilenceBoard, "viewer")
        made = [new_silence(duration_s=3600, author="ana", rule=f"rule-{i}") for i in range(5)]
        for silence in made:
            await ana.put(silence)
        book = SilenceBook(tmp_path / "silences.json")
        async with LateHop(team_buckets.hub.urls) as hop:
            options = dataclasses.replace(team_buckets.options("collector"), urls=(hop.url,))
            mirror = await start_silences_mirror(book, options, "acme", profile="acme-team")
            # the hub's answer came before every silence: the case under test
            assert hop.reordered == len(made)
            assert sorted(s.id for s in book.active()) == sorted(f"hub-{s.id}" for s in made)
            await mirror.stop()
        await ana.stop()
        await ana_nc.close()
        await collector.close()

    asyncio.run(go())
