"""The team archive end to end: a real nats-server, the simulator, two `relay` processes with
`--team-archive` (DuckLake, its catalog in a PostgreSQL server of the test's own, its files in a shared folder,
then in a bucket of an S3-compatible server: moto's, checking signatures and policies) and two `stream --hub`
viewers that read it. The relay holding the lease is SIGKILLed while it moves; the standby
takes the lease over and goes on. The lake holds every event it was given once, in the hub's order; each viewer —
one that read the hub from its start, one that joined after the first 1,500 messages — exports, filters and shows
a timeline as one store of the whole history, each event once. The catalog's password reaches the viewers
through the keyring only (the first keeps it there; the second and every `export` find it), and so do the
storage's keys."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from helpers.fixtures_postgres import RELAY_PASSWORD, VIEWER_PASSWORD, Postgres
from helpers.fixtures_s3 import KEY_ID_ENV, SECRET_ENV, Files
from helpers.hub_cli import HubCli, relay, wait_stored
from helpers.team_alerts import leader, wait_until
from helpers.team_lake import lake_ids
from tenant_events.hub.subjects import position_text
from tenant_events.paths import AppPaths
from tenant_events.settings import load_settings, save_settings
from tenant_events.store import Batch, StoreWriter
from tenant_events.store.archive_lake import use_password

REAL = os.environ.get("TENANT_EVENTS_REAL_KEYRING") == "1"
pytestmark = [
    pytest.mark.hub,
    pytest.mark.dbus,
    pytest.mark.skipif(not REAL, reason="needs ./run test (gnome-keyring on D-Bus)"),
]
BACKLOG, MORE, LIVE, JOINED = 3000, 800, 1000, 1500
PASSWORD_ENV = "TENANT_EVENTS_TEAM_ARCHIVE_PASSWORD"


def _viewer(hub, data: Path, user: str, password: str, team: tuple[str, ...], env: dict[str, str]) -> HubCli:
    args = ["stream", "--hub", hub.urls, "--hub-tenant", "acme", "--name", "acme", "--data-dir", str(data)]
    args += ["--hub-user", user, *team]
    return HubCli(*args, env={"TENANT_EVENTS_HUB_PASSWORD": password, **env})


def _cli(data: Path, *args: str) -> list[str]:
    """The event ids a read command prints (JSON lines), in its order."""
    out = subprocess.run(
        [sys.executable, "-m", "tenant_events", *args, "--data-dir", str(data)],
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
        env={k: v for k, v in os.environ.items() if k not in (PASSWORD_ENV, KEY_ID_ENV, SECRET_ENV)},
    ).stdout
    return [orjson.loads(line)["event"]["id"] for line in out.splitlines()]


def test_the_ducklake_test_with_postgresql_and_two_viewers(
    make_simulator, nats_single, postgres: Postgres, lake_files: Files, tmp_path: Path
):
    sim = make_simulator(backlog=BACKLOG, rate=0, heartbeat=0.2)
    token = sim.mint_token(ttl=3600)
    shared = tmp_path / "shared"
    shared.mkdir()
    database = postgres.new_lake()
    relay_team = lake_files.options(postgres.catalog(database, "relay"), shared)
    viewer_team = lake_files.options(postgres.catalog(database, "viewer"), shared)
    watch = lake_files.lake(postgres.catalog(database, "viewer"), shared)
    use_password(watch.catalog, VIEWER_PASSWORD)
    lake_files.use(watch, "viewer")
    dirs = [tmp_path / "relay-a", tmp_path / "relay-b"]
    for data in dirs:  # the live tier of the relays' copies: the newest LIVE events, the rest to the lake
        paths = AppPaths.resolve(str(data)).ensure()
        settings = load_settings(paths)
        settings.retention.max_events = LIVE
        save_settings(paths, settings)
    late = tmp_path / "viewer-late"  # joined the hub at its message JOINED (what it held then is gone)
    writer = StoreWriter(AppPaths.resolve(str(late)).ensure().database_file("acme"))
    writer.commit_sync(Batch(cursor=position_text(JOINED)))
    writer.close()
    early = tmp_path / "viewer-early"
    viewers = [
        _viewer(
            nats_single,
            early,
            "viewer",
            nats_single.credentials.viewer,
            viewer_team,
            {PASSWORD_ENV: VIEWER_PASSWORD, **lake_files.env("viewer")},
        )
    ]
    extra = (*relay_team, "--team-archive-every", "0.3")
    relays = [
        relay(
            sim,
            nats_single,
            token,
            d,
            extra=extra,
            env={PASSWORD_ENV: RELAY_PASSWORD, **lake_files.env("relay")},
        )
        for d in dirs
    ]
    procs = [*viewers, *relays]
    try:
        first = leader(relays)
        standby = next(r for r in relays if r is not first)
        wait_until(lambda: len(lake_ids(watch)) > 0, "the first move into the lake", procs)
        first.kill()  # while it moves (or between two moves)
        killed_with = len(lake_ids(watch))
        standby.wait_for("leader: holds the lease", timeout=60)
        standby.wait_for("team archive: moving events older than the live tier", timeout=60)
        sim.emit(MORE)
        total = BACKLOG + MORE
        wait_until(lambda: len(lake_ids(watch)) >= total - LIVE, "the standby's moves", procs, timeout=120)
        viewers.append(
            _viewer(nats_single, late, "viewer2", nats_single.credentials.viewer2, viewer_team, {})
        )
        procs.append(viewers[-1])
        wait_stored(early / "tenants" / "acme.sqlite3", total, timeout=120, who=viewers[0])
        # (what it stored from the hub and the lake's events before them: every event, as its export shows)
        wait_stored(late / "tenants" / "acme.sqlite3", total, timeout=120, who=viewers[1])
        for viewer in viewers:
            assert viewer.stop() == 0, viewer.text()[-3000:]
    finally:
        for proc in procs:
            if proc.proc.poll() is None:
                proc.stop()
    for role in ("relay", "viewer"):  # the storage's secrets: in no output, log or data dir file
        secret = (lake_files.keys(role) or ("", ""))[1]
        assert not secret or not any(secret in p.text() for p in procs)
        assert not secret or not any(
            secret.encode() in f.read_bytes() for f in tmp_path.rglob("*") if f.is_file()
        )
    lake = lake_ids(watch)
    assert len(lake) == total - LIVE and len(set(lake)) == len(lake), "each event once in the lake"
    every = _cli(early, "export", "--jsonl", "-")
    assert len(every) == total == len(set(every))
    assert lake == every[: len(lake)], "the lake holds the hub's events in the hub's order"
    assert killed_with < len(lake)
    joined = _cli(late, "export", "--jsonl", "-")
    assert joined == every, "the late viewer: the lake's older events, then its own, each once"
    query = "type:user.* -purpose:test"
    assert _cli(late, "export", "--jsonl", "-", "--query", query) == _cli(
        early, "export", "--jsonl", "-", "--query", query
    )
    user = _user_on_both_sides(early, JOINED)
    early_line = _cli(early, "timeline", f"user:{user}", "--jsonl", "-")
    assert early_line and _cli(late, "timeline", f"user:{user}", "--jsonl", "-") == early_line


def _user_on_both_sides(data: Path, at: int) -> str:
    """A user named by events both before the `at`th and after it (the late viewer's timeline crosses the seam)."""
    out = subprocess.run(
        [sys.executable, "-m", "tenant_events", "export", "--jsonl", "-", "--data-dir", str(data)],
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
    ).stdout.splitlines()
    users = [set(re.findall(r'"user_id":"(\w+\|[^"]+)"', line)) for line in out]  # (auth0|…, not a subject)
    both = set().union(*users[:at]) & set().union(*users[at:])
    assert both, "no user named on both sides of the seam"
    return sorted(both)[0]
