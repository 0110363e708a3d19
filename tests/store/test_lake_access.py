"""The access review and the entity directory over a team's archive (docs/archive.md "Team archive"): a viewer that
joined late — its own database holds only the recent events, the lake (DuckLake over a real PostgreSQL server and
a shared folder) the rest — answers `tenant-events access` for moments before it joined, and names the entities
only the lake's events mention (`timeline`, `export`), as a relay whose database holds every event does; through
SIGKILL mid-catch-up, each lake event is taken in once."""

from __future__ import annotations

import fcntl
import os
import random
import sqlite3
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest

from helpers.cli_here import run_here
from helpers.entity_events import T0, simulated_rows
from helpers.fixtures_postgres import VIEWER_PASSWORD, Postgres
from helpers.team_lake import filled_store, lake_child, lake_ids, lakes
from tenant_events.store import EventRow, StoreWriter
from tenant_events.store import archive_move as move
from tenant_events.store.archive_keeper import keep
from tenant_events.values.retention import Retention
from tenant_events.values.team_archive import Lake

LATER = T0.timestamp() + 60 * 86400  # every simulated event is older than the relay's live setting
JOINED = 1800  # the late viewer's first event
TEAM = 2400  # the events of the team most tests build (and of `relay_answers`)
MOVE = Retention(keep_live_days=30, settle_seconds=0)
FAR = Retention(keep_live_days=36500, settle_seconds=3600)  # a viewer's upkeep that keeps its own events


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _team(postgres: Postgres, tmp_path: Path, n: int = 3000) -> tuple[Lake, list[EventRow]]:
    """`n` simulated events (every type, a consistent tenant), all moved into a new lake by its relay; the lake
    as a viewer reads it."""
    relay_lake, viewer_lake = lakes(postgres, tmp_path / "shared")
    rows, _life = simulated_rows(n, seed=5)
    copy = filled_store(tmp_path / "relay-copy.sqlite3", rows, relay_lake)
    writer = StoreWriter(copy)
    try:
        keep(writer, MOVE, LATER, 500, relay_lake, lambda: True)
    finally:
        writer.close()
    assert len(lake_ids(relay_lake)) == n
    return viewer_lake, rows


def _data_dir(tmp_path: Path, name: str, rows: list[EventRow], lake: Lake | None = None) -> Path:
    data = tmp_path / name
    (data / "tenants").mkdir(parents=True)
    filled_store(data / "tenants" / "acme.sqlite3", rows, lake)
    return data


def _access(data: Path, *words: str) -> tuple[str, str]:
    result = run_here(["access", "--data-dir", str(data), *words, "--csv", "-"], limit=120)
    assert result.returncode == 0, result.stderr
    return result.stdout, result.stderr


def _answers(data: Path, rows: list[EventRow]) -> list[tuple[str, str]]:
    """`access` at moments before and after the viewer joined, and `access diff` across its joining."""
    moments = [rows[i].time_ms for i in (150, 600, 1200, JOINED - 1, len(rows) - 200)]
    said = [_access(data, "--at", _iso(m)) for m in moments]
    said.append(_access(data, "diff", "--from", _iso(moments[0]), "--to", _iso(moments[3])))
    said.append(_access(data, "diff", "--from", _iso(moments[1]), "--to", _iso(moments[4])))
    return said


@pytest.fixture(scope="session")
def relay_answers(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, str]]:
    """`_answers` of a relay whose own database holds the team's 2400 events: what every viewer of them must say.
    Made once for every worker of the session (the first to come makes it, the others wait and read it), not once
    a test: its access diffs are among the longest reads of the suite. Session-scoped, not module-scoped, so that
    the module's tests still run side by side on several workers."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # (the session's folder, every worker's own folder under it)
    said = shared / "lake-access-relay-2400.json"
    with open(shared / "lake-access-relay-2400.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not said.exists():
            rows, _life = simulated_rows(TEAM, seed=5)
            made = _answers(_data_dir(tmp_path_factory.mktemp("relay-2400"), "relay", rows), rows)
            said.with_suffix(".part").write_bytes(orjson.dumps(made))
            said.with_suffix(".part").replace(said)
    return [(str(out), str(err)) for out, err in orjson.loads(said.read_bytes())]


def _named(data: Path, rows: list[EventRow]) -> list[str]:
    """`timeline` of the users and organizations created before the viewer joined, by e-mail and by name (the
    directory finds them), and the whole `export` with the table's sentences (the directory names them)."""
    said = []
    for row in rows[:JOINED]:
        obj = orjson.loads(row.raw)["event"]["data"]["object"]
        if row.type == "user.created" and obj.get("email"):
            said.append(f"email:{obj['email']}")
        elif row.type == "organization.created" and obj.get("name"):
            said.append(f"org:{obj['name']}")
    out = []
    for spec in said[:12]:
        result = run_here(["timeline", "--data-dir", str(data), spec], limit=120)
        out.append(f"{spec} → {result.returncode}\n{result.stdout}")
    export = run_here(["export", "--data-dir", str(data), "--csv", "-"], limit=120)
    assert export.returncode == 0, export.stderr
    # (each event's seq is its own store's: the lake numbers the team's older events below every database's)
    return [*out, *(line.split(",", 1)[1] for line in export.stdout.splitlines())]


def test_a_late_viewer_answers_the_access_review_and_names_entities_as_a_relay_with_every_event(
    postgres: Postgres, tmp_path: Path
):
    lake, rows = _team(postgres, tmp_path)
    relay = _data_dir(tmp_path, "relay", rows)  # every event in its own tiers
    late = _data_dir(tmp_path, "late", rows[JOINED:], lake)
    for data, team in ((relay, None), (late, lake)):
        writer = StoreWriter(data / "tenants" / "acme.sqlite3")
        try:  # the upkeep (the app's, `stream`'s), every event older than the live setting by then: the relay's
            # moves them into its archive; the viewer's takes the lake's older events in, then lets go of its own
            done = keep(writer, MOVE, LATER, lake=team)
        finally:
            writer.close()
        assert done.settled > 0 and done.directory_settled > 0
    assert done.lake_taken_in > 0 and done.moved == len(rows) - JOINED
    expected = _answers(relay, rows)
    assert "History complete from" in expected[0][1] and expected[0][0].count("\n") > 3
    assert _answers(late, rows) == expected
    assert _named(late, rows) == _named(relay, rows)


def test_the_access_command_takes_the_lakes_events_in_itself(
    postgres: Postgres, tmp_path: Path, relay_answers: list[tuple[str, str]]
):
    """No upkeep ran: `access` takes in what the history lacks before it answers, as it does the unindexed
    tail; `reindex` builds the directory and history again from the database's own events and the lake's."""
    lake, rows = _team(postgres, tmp_path, TEAM)
    relay = _data_dir(tmp_path, "relay", rows)
    late = _data_dir(tmp_path, "late", rows[JOINED:], lake)
    expected = relay_answers
    assert _answers(late, rows) == expected
    result = run_here(["reindex", "--data-dir", str(late)], limit=120)
    assert result.returncode == 0, result.stderr
    assert _answers(late, rows) == expected
    assert _named(late, rows) == _named(relay, rows)


def _kept(data: Path, lake: Lake, policy: Retention = FAR, lets_go_first: bool = False) -> int:
    """A viewer's upkeep (`lets_go_first`: another process's move lets go of what the lake holds just before it,
    as a mover racing this upkeep's intake would); the lake's events it took in."""
    database = data / "tenants" / "acme.sqlite3"
    writer = StoreWriter(database)
    try:
        while lets_go_first and (planned := move.plan(database, MOVE, LATER, lake=lake, writes_lake=False)):
            assert writer.run_archive_job(lambda c, p=planned: move.commit(c, p)).result()  # type: ignore[misc]
        return keep(writer, policy, LATER, lake=lake).lake_taken_in
    finally:
        writer.close()


def test_a_viewer_the_relay_has_not_caught_up_with_takes_the_rest_in_as_the_lake_grows(
    postgres: Postgres, tmp_path: Path, relay_answers: list[tuple[str, str]]
):
    """The lake holds the team's first 1000 events, the viewers the events from 1800 on: the lake comes first whole
    (nothing between is held by anyone yet) and is taken in; once the relay has moved on past the viewers' first
    event, each takes in the rest up to it — whether it keeps its own events, lets go of them after, or a move
    let go of them before its intake came to it — and answers as the relay's database with every event."""
    relay_lake, lake = lakes(postgres, tmp_path / "shared")
    rows, _life = simulated_rows(TEAM, seed=5)
    copy = tmp_path / "relay-copy.sqlite3"
    kept, steady, raced = (
        _data_dir(tmp_path, name, rows[JOINED:], lake) for name in ("kept", "steady", "raced")
    )
    for part in (rows[:1000], rows[1000:]):
        filled_store(copy, part, relay_lake)
        writer = StoreWriter(copy)
        try:
            keep(writer, MOVE, LATER, 500, relay_lake, lambda: True)
        finally:
            writer.close()
        first = part[0] is rows[0]
        assert _kept(kept, lake) == (1000 if first else JOINED - 1000)
        assert _kept(steady, lake, FAR if first else MOVE) == (1000 if first else JOINED - 1000)
        assert _kept(raced, lake, FAR if first else MOVE, lets_go_first=not first) == (
            1000 if first else JOINED - 1000
        )
    assert len(lake_ids(relay_lake)) == len(rows)
    assert _history(raced / "tenants" / "acme.sqlite3") == _history(steady / "tenants" / "acme.sqlite3")
    for viewer in (kept, steady, raced):
        assert _answers(viewer, rows) == relay_answers


_TAKER = """
import sys
from pathlib import Path
from tenant_events.store import lake_intake
from tenant_events.store.archive_lake import use_password
from tenant_events.store.schema import connect
use_password(sys.argv[2], sys.stdin.readline().strip())
conn = connect(Path(sys.argv[1]))
said = []
def run(work):
    done = work(conn)
    if not said:  # (once a chunk is in: the kill then falls inside the catch-up, not in the start-up)
        said.append(print("taking", flush=True))
    return done
lake_intake.catch_up(Path(sys.argv[1]), run, chunk=40)
print("done", flush=True)
"""


def _taker(database: Path, lake: Lake) -> subprocess.Popen[str]:
    return lake_child(_TAKER, [str(database), lake.catalog], VIEWER_PASSWORD)


def _history(database: Path) -> dict[str, list[tuple[object, ...]]]:
    conn = sqlite3.connect(database)
    try:
        tables = {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        return {
            table: sorted(conn.execute(f"SELECT * FROM {table}").fetchall()) if table in tables else []
            for table in ("access_marks", "access_ends", "access_spans", "entities", "links", "lake_intake")
        }
    finally:
        conn.close()


def test_a_viewer_killed_mid_catch_up_takes_each_lake_event_in_once(
    postgres: Postgres, tmp_path: Path, relay_answers: list[tuple[str, str]]
):
    lake, rows = _team(postgres, tmp_path, TEAM)
    late = _data_dir(tmp_path, "late", rows[JOINED:], lake)
    whole = _data_dir(tmp_path, "whole", rows[JOINED:], lake)  # the same viewer, never killed
    database = late / "tenants" / "acme.sqlite3"
    rng = random.Random(3)
    positions = []
    for _round in range(10):
        proc = _taker(database, lake)
        assert proc.stdout is not None
        if proc.stdout.readline().strip() == "taking":
            time.sleep(rng.uniform(0.0, 0.4))
        proc.kill()
        proc.wait(30)
        positions.append(_history(database)["lake_intake"])
    finished = _taker(database, lake)
    assert finished.stdout is not None and finished.stdout.read().split()[-1:] == ["done"]
    assert finished.wait(120) == 0
    assert len({str(p) for p in positions}) > 3, "the kills fell at several places of the catch-up"
    _access(whole, "--at", _iso(rows[150].time_ms))  # (`access` takes the lake in, whole, before it answers)
    assert _history(database) == _history(whole / "tenants" / "acme.sqlite3")
    assert _answers(late, rows) == relay_answers
