"""A team's shared archive: DuckLake with its catalog in a real PostgreSQL server (a cluster of the test's own,
passwords asked over TCP) and its files in a shared folder or in S3-compatible object storage (moto's server,
checking signatures and policies; each test runs over both) (docs/archive.md "Team archive").

The relay's database moves into the lake, each event once, through a crash between the lake's commit and its
own, a second relay with its own numbering taking over, and moves racing each other; a viewer — whose catalog
user may only read — reads the lake together with its own tiers and answers as one store of the same events
does, whether it joined early, late, after a hole, or let go of what the lake holds; two viewer processes read
while the relay moves and never see an event twice."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from helpers.fixtures_postgres import RELAY_PASSWORD, VIEWER_PASSWORD, Postgres
from helpers.fixtures_s3 import Files, Keys
from helpers.history import history, live_rows
from helpers.team_lake import filled_store, lake_ids
from tenant_events.errors import UserFixableError
from tenant_events.store import EventReader, EventRow, StoreWriter
from tenant_events.store.archive_keeper import keep
from tenant_events.store.archive_lake import LakeBusy, expire, tidy, use_password, write_move
from tenant_events.store.entity_reader import DirectoryReader
from tenant_events.values.events import EventFilter
from tenant_events.values.retention import Retention
from tenant_events.values.team_archive import Lake

DAY = 86400.0
ROOT = Path(__file__).resolve().parents[2]
MOVE = Retention(keep_live_days=30, settle_seconds=0)
FILTERS = (
    EventFilter(),
    EventFilter(text="ada"),
    EventFilter(query="type:user.* -purpose:test"),
    EventFilter(query="ip:203.0.113.7"),
    EventFilter(query="org:acme OR org:globex"),
    EventFilter(types=frozenset({"group.created"})),
)


def _lakes(pg: Postgres, shared: Path, lake_files: Files) -> tuple[Lake, Lake]:
    """The same lake as its relay writes it and as a viewer reads it (another catalog user; in this process, the
    relay's storage keys: one process holds one pair per place, as one computer's keyring does)."""
    name = pg.new_lake()
    shared.mkdir(exist_ok=True)
    relay, viewer = (
        lake_files.lake(pg.catalog(name, "relay"), shared),
        lake_files.lake(pg.catalog(name, "viewer"), shared),
    )
    use_password(relay.catalog, RELAY_PASSWORD)
    use_password(viewer.catalog, VIEWER_PASSWORD)
    lake_files.use(relay, "relay")
    return relay, viewer


def _secrets(password: str, keys: Keys | None) -> str:
    """What a child process reads from its standard input: the catalog's password, the storage's keys."""
    return "\n".join([password, *(keys or ("", ""))]) + "\n"


def _ids(reader: EventReader) -> list[str]:
    return [e.event_id for e, _raw in reader.export_iter(chunk=333)]


def _answers(reader: EventReader, f: EventFilter) -> dict[str, object]:
    newest = reader.page_before(f, None, 40)
    deeper = reader.page_before(f, newest[-1].seq, 60) if newest else []
    return {
        "count": reader.count(f),
        "pages": [e.event_id for e in newest + deeper],
        "by type": reader.counts_by_type(f),
        "histogram": reader.histogram(f, 86400),
        "span": reader.time_span(f),
    }


def _timeline(reader: EventReader, kind: str, entity: str) -> list[str]:
    directory = DirectoryReader.over(reader)
    first = directory.timeline(kind, entity, None, 15)
    rest = directory.timeline(kind, entity, first[-1].seq, 60) if first else []
    return [e.event_id for e in first + rest]


def _agree(view: Path, single: Path) -> None:
    """Every read of `view` (a database read with the lake) answers as `single` (the same events, one store)."""
    with EventReader(view) as a, EventReader(single) as b:
        ids = _ids(a)
        assert len(ids) == len(set(ids)), "an event read twice"
        assert ids == _ids(b)
        for f in FILTERS:
            assert _answers(a, f) == _answers(b, f), f
        for eid in (ids[0], ids[len(ids) // 3], ids[-1]):
            found = a.find(eid)
            assert found is not None and found.raw == b.find(eid).raw  # type: ignore[union-attr]
        users = sorted({u for _e, r in b.export_iter() for u in re.findall(r'"user_id":\s*"([^"]+)"', r)})
        for user in users[:3]:
            assert _timeline(a, "user", user) == _timeline(b, "user", user)


def _moved(
    postgres: Postgres, tmp_path: Path, seed: int, lake_files: Files
) -> tuple[Lake, Lake, list[EventRow], float, int]:
    """90 days of history in a relay's database (`relay.sqlite3`), moved into a new lake 250 events a move: the
    lake as the relay and as a viewer see it, the rows, when they moved and how many did."""
    relay_lake, viewer_lake = _lakes(postgres, tmp_path / "shared", lake_files)
    rows = history(2400, time.time() - 90 * DAY, 90 * DAY / 2400, seed=seed)
    relay = filled_store(tmp_path / "relay.sqlite3", rows, relay_lake)
    now = time.time()
    writer = StoreWriter(relay)
    try:
        moved = keep(writer, MOVE, now, move_rows=250, lake=relay_lake, fence=lambda: True).moved
    finally:
        writer.close()
    return relay_lake, viewer_lake, rows, now, moved


def test_viewers_read_the_lake_with_their_own_tiers_as_one_store(
    postgres: Postgres, tmp_path: Path, lake_files: Files
):
    _relay_lake, viewer_lake, rows, now, moved = _moved(postgres, tmp_path, seed=3, lake_files=lake_files)
    relay = tmp_path / "relay.sqlite3"
    # no event written beside it (only the access history older than the live tier settles there)
    assert 1200 < moved < 2000 and not list((tmp_path / "relay.archive").glob("*.parquet"))
    assert lake_files.parquet_files(tmp_path / "shared"), "the lake's files where it keeps them"
    if lake_files.bucket is not None:
        assert not list((tmp_path / "shared").iterdir()), "a lake in a bucket writes no local file"
    _agree(relay, filled_store(tmp_path / "all.sqlite3", rows))  # the relay reads the lake too
    early = filled_store(tmp_path / "early.sqlite3", rows, viewer_lake)  # holds all: the lake adds nothing
    _agree(early, tmp_path / "all.sqlite3")
    late = filled_store(
        tmp_path / "late.sqlite3", rows[900:], viewer_lake
    )  # joined late: the lake's first 900
    _agree(late, tmp_path / "all.sqlite3")
    hole = filled_store(
        tmp_path / "hole.sqlite3", rows[moved + 200 :], viewer_lake
    )  # after a hole nobody holds
    _agree(hole, filled_store(tmp_path / "no-hole.sqlite3", rows[:moved] + rows[moved + 200 :]))
    lets_go = filled_store(tmp_path / "lets-go.sqlite3", rows, viewer_lake)
    writer = StoreWriter(lets_go)
    try:
        gone = keep(
            writer, MOVE, now, move_rows=300, lake=viewer_lake
        )  # a viewer: lets go of what the lake holds
    finally:
        writer.close()
    assert gone.moved == moved and not list((tmp_path / "lets-go.archive").glob("*.parquet"))
    with EventReader(lets_go) as reader:
        assert reader.archived_upto() == moved
    _agree(lets_go, tmp_path / "all.sqlite3")


def test_the_lakes_retention_drops_whole_moves_older_than_the_setting_and_viewers_read_on(
    postgres: Postgres, tmp_path: Path, lake_files: Files
):
    """`--keep-archive` for the team's lake: the relay holding the lease drops the oldest moves whose every event
    is older than the setting (whole moves, each one lake transaction, fenced by the lease); a viewer that joined
    late then reads what is left with its own events as one store of them does."""
    relay_lake, viewer_lake, rows, now, moved = _moved(postgres, tmp_path, seed=4, lake_files=lake_files)
    held = lake_ids(viewer_lake)
    assert held == [r.event_id for r in rows[:moved]] and moved > 1000
    cutoff_ms = int((now - 75 * DAY) * 1000)
    with pytest.raises(LakeBusy):  # the lease lapsed before the commit: nothing dropped
        expire(relay_lake, cutoff_ms, fence=lambda: False)
    assert lake_ids(viewer_lake) == held
    dropped = expire(relay_lake, cutoff_ms)
    kept = lake_ids(viewer_lake)
    assert dropped > 0 and dropped % 250 == 0 and kept == held[dropped:], "whole moves, the oldest"
    assert all(r.time_ms < cutoff_ms for r in rows[:dropped]), "only what is older than the setting"
    assert rows[dropped + 249].time_ms >= cutoff_ms, "each move whose every event is older went"
    assert expire(relay_lake, cutoff_ms) == 0
    late = filled_store(tmp_path / "late.sqlite3", rows[900:], viewer_lake)
    _agree(late, filled_store(tmp_path / "kept.sqlite3", rows[dropped:]))
    # one that joined after a hole nobody holds: the lake, from its first event left, comes first whole
    hole = filled_store(tmp_path / "hole.sqlite3", rows[moved + 200 :], viewer_lake)
    _agree(hole, filled_store(tmp_path / "no-hole.sqlite3", rows[dropped:moved] + rows[moved + 200 :]))


def test_each_event_enters_the_lake_once_through_crashes_takeovers_and_races(
    postgres: Postgres, tmp_path: Path, lake_files: Files
):
    relay_lake, viewer_lake = _lakes(postgres, tmp_path / "shared", lake_files)
    rows = history(1500, time.time() - 60 * DAY, 60 * DAY / 1500, seed=9)
    ids = [r.event_id for r in rows]
    live = live_rows(rows)
    # a crash after the lake committed and before the relay's database let go: the next move adds nothing twice
    write_move(relay_lake, live[:200])
    relay = filled_store(tmp_path / "a.sqlite3", rows[:900], relay_lake)
    writer = StoreWriter(relay)
    try:
        keep(writer, MOVE, move_rows=120, lake=relay_lake, fence=lambda: True)
    finally:
        writer.close()
    first = lake_ids(relay_lake)
    assert first == ids[: len(first)] and 200 < len(first) <= 900
    # a move whose lease lapsed before its commit writes nothing
    with pytest.raises(LakeBusy):
        write_move(relay_lake, live[:1000], fence=lambda: False)
    assert lake_ids(relay_lake) == first
    # the relay that takes over numbers the hub's events its own way (it started reading later): it goes on
    takeover = filled_store(tmp_path / "b.sqlite3", rows[300:], relay_lake)
    writer = StoreWriter(takeover)
    try:  # ten days later: more is due
        keep(writer, MOVE, time.time() + 10 * DAY, move_rows=170, lake=relay_lake, fence=lambda: True)
    finally:
        writer.close()
    lake = lake_ids(relay_lake)
    assert lake == ids[: len(lake)] and len(lake) > len(first)
    # two moves at once (two relays that both think they lead): whatever commits, nothing twice
    more = live_rows(rows[len(lake) : len(lake) + 300], 5000)
    outcomes: list[object] = []

    both_ready = threading.Barrier(2, timeout=120)

    def move() -> None:  # each waits, its rows written, until the other is as far: then both commit
        try:
            outcomes.append(write_move(relay_lake, more, fence=lambda: both_ready.wait() >= 0))
        except LakeBusy as exc:
            outcomes.append(exc)

    racers = [threading.Thread(target=move) for _ in range(2)]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join()
    assert sorted(type(o).__name__ for o in outcomes) == ["LakeBusy", "int"], outcomes  # one commits
    assert lake_ids(relay_lake) == ids[: len(lake) + 300]
    tidy(relay_lake)  # DuckLake's upkeep: the small files of each move merged, nothing else changes
    assert lake_ids(relay_lake) == ids[: len(lake) + 300]
    # a viewer's catalog user reads and cannot write: no teammate deletes the team's history
    with pytest.raises(UserFixableError):
        write_move(viewer_lake, live_rows(rows[-10:], 9000))
    from tenant_events.store import duck
    from tenant_events.store.archive_lake import attach

    cur = duck.cursor()
    try:
        with pytest.raises(Exception, match=r"(?i)read.only|permission"):
            cur.execute(f"DELETE FROM {attach(viewer_lake, read_only=True)}.events")
    finally:
        cur.close()
    assert lake_ids(relay_lake) == ids[: len(lake) + 300]


_MOVER = """
import json, sys
from pathlib import Path
from tenant_events.store import StoreWriter
from tenant_events.store.archive_keeper import keep
from tenant_events.store.archive_lake import use_password
from tenant_events.store.lake_storage import use_keys
from tenant_events.values.retention import Retention
from tenant_events.values.team_archive import Lake
lake = Lake(**json.loads(sys.argv[2]))
use_password(lake.catalog, sys.stdin.readline().strip())
use_keys(lake, (sys.stdin.readline().strip(), sys.stdin.readline().strip()))
writer = StoreWriter(Path(sys.argv[1]))
print("moving", flush=True)
keep(writer, Retention(keep_live_days=30, settle_seconds=0), move_rows=40, lake=lake, fence=lambda: True)
writer.close()
print("done", flush=True)
"""


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "desktop"), *sys.path])}


def test_a_mover_killed_at_random_moments_leaves_every_event_in_exactly_one_place(
    postgres: Postgres, tmp_path: Path, lake_files: Files
):
    relay_lake, _viewer = _lakes(postgres, tmp_path / "shared", lake_files)
    rows = history(1200, time.time() - 60 * DAY, 60 * DAY / 1200, seed=5)
    ids = [r.event_id for r in rows]
    relay = filled_store(tmp_path / "relay.sqlite3", rows, relay_lake)
    import random

    rng = random.Random(11)
    finished = False
    for _round in range(10):
        mover = subprocess.Popen(
            [sys.executable, "-c", _MOVER, str(relay), json.dumps(dataclasses.asdict(relay_lake))],
            env=_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert mover.stdin is not None and mover.stdout is not None
        mover.stdin.write(_secrets(RELAY_PASSWORD, lake_files.keys("relay")))
        mover.stdin.close()
        assert mover.stdout.readline().strip() == "moving"
        time.sleep(rng.uniform(0.05, 1.5))
        mover.kill()
        mover.wait(30)
        lake = lake_ids(relay_lake)
        assert lake == ids[: len(lake)], "the lake holds each event once, in order"
        with EventReader(relay) as reader:
            assert _ids(reader) == ids, "the relay's own view: every event once"
    finished_run = subprocess.run(
        [sys.executable, "-c", _MOVER, str(relay), json.dumps(dataclasses.asdict(relay_lake))],
        env=_env(),
        input=_secrets(RELAY_PASSWORD, lake_files.keys("relay")),
        capture_output=True,
        text=True,
        timeout=300,
    )
    finished = finished_run.stdout.splitlines()[-1:] == ["done"]
    assert finished, finished_run.stderr[-3000:]
    with EventReader(relay) as reader:
        assert _ids(reader) == ids
        live = reader.count(EventFilter()) - reader.archived_upto()
    assert lake_ids(relay_lake) == ids[: len(ids) - live]


_VIEWER = """
import json, sys
from pathlib import Path
from tenant_events.store import EventReader
from tenant_events.store.archive_lake import use_password
from tenant_events.store.lake_storage import use_keys
from tenant_events.values.events import EventFilter
from tenant_events.values.team_archive import Lake
lake = Lake(**json.loads(sys.argv[2]))
use_password(lake.catalog, sys.stdin.readline().strip())
use_keys(lake, (sys.stdin.readline().strip(), sys.stdin.readline().strip()))
stop = Path(sys.argv[3])
while True:
    last = stop.exists()
    with EventReader(Path(sys.argv[1])) as reader:
        ids = [e.event_id for e, _r in reader.export_iter(chunk=500)]
        print(json.dumps([reader.count(EventFilter()), ids]), flush=True)
    if last:
        break
"""


def test_two_viewer_processes_read_while_the_relay_moves_and_never_see_an_event_twice(
    postgres: Postgres, tmp_path: Path, lake_files: Files
):
    relay_lake, viewer_lake = _lakes(postgres, tmp_path / "shared", lake_files)
    rows = history(2000, time.time() - 90 * DAY, 90 * DAY / 2000, seed=7)
    ids = [r.event_id for r in rows]
    relay = filled_store(tmp_path / "relay.sqlite3", rows, relay_lake)
    viewers = [
        filled_store(tmp_path / "early.sqlite3", rows, viewer_lake),
        filled_store(tmp_path / "late.sqlite3", rows[700:], viewer_lake),
    ]
    stop = tmp_path / "stop"
    procs = []
    for database in viewers:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                _VIEWER,
                str(database),
                json.dumps(dataclasses.asdict(viewer_lake)),
                str(stop),
            ],
            env=_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdin is not None
        proc.stdin.write(_secrets(VIEWER_PASSWORD, lake_files.keys("viewer")))  # (read-only keys)
        proc.stdin.close()
        procs.append(proc)
    first_reads = [json.loads(p.stdout.readline()) for p in procs if p.stdout is not None]  # before any move
    writer = StoreWriter(relay)
    try:
        done = keep(writer, MOVE, move_rows=150, lake=relay_lake, fence=lambda: True)
        assert done.moved > 1000
    finally:
        writer.close()
        stop.touch()
    order = {eid: i for i, eid in enumerate(ids)}
    for proc, first in zip(procs, first_reads, strict=True):
        assert proc.stdout is not None
        out = proc.stdout.read()  # (to its end: the viewer's last read, after the relay stopped moving)
        assert proc.wait(300) == 0
        reads = [first, *(json.loads(line) for line in out.splitlines())]
        assert len(reads) >= 2
        for count, seen in reads:
            assert count == len(seen) == len(set(seen)), "each event once"
            assert [order[e] for e in seen] == sorted(order[e] for e in seen), "in the hub's order"
        assert reads[-1][1] == ids  # in the end: the lake's older events and its own, all of them
