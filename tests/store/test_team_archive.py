"""A team's shared archive: DuckLake with its catalog in a real PostgreSQL server (Debian's, a cluster of the
test's own) and its files on a shared path. The relay moves events into it while two viewer processes read it;
every viewer read holds whole moves only, each event once; the relay's own reads over its live rows and the
lake answer as a single-tier store does (docs/archive.md "Team archive")."""

from __future__ import annotations

import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from helpers.history import history
from tenant_events.store import Batch, EventReader, StoreWriter
from tenant_events.store.archive_build import LiveRow
from tenant_events.store.archive_catalog import Lake
from tenant_events.store.archive_keeper import keep
from tenant_events.store.archive_lake import write_lake
from tenant_events.values.events import EventFilter
from tenant_events.values.retention import Retention

DAY = 86400.0
ROOT = Path(__file__).resolve().parents[2]


def _pg_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def postgres():
    """A PostgreSQL cluster of this test's own on a free port (as the `postgres` user when run as root: its
    folder is outside pytest's, which that user cannot enter)."""
    bin_dir = _pg_bin()
    if bin_dir is None:
        pytest.fail("PostgreSQL is not installed: ./run test installs Debian's postgresql package")
    home = Path(tempfile.mkdtemp(prefix="tenant-events-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:
        shutil.chown(home, "postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    port = _free_port()
    data = home / "data"
    subprocess.run(
        [*as_user, str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", "lake"],
        check=True,
        capture_output=True,
    )
    start = [*as_user, str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(home / "log"), "-w", "-t", "120"]
    options = f"-p {port} -k {home} -c listen_addresses=127.0.0.1 -c fsync=off"
    subprocess.run([*start, "-o", options, "start"], check=True, capture_output=True)
    made = iter(range(1, 1000))

    def new_catalog() -> str:
        """A database of its own on the server, for one lake's catalog."""
        name = f"lake{next(made)}"
        subprocess.run(
            [str(bin_dir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "lake", name], check=True
        )
        return f"postgres:dbname={name} host=127.0.0.1 port={port} user=lake"

    try:
        yield new_catalog
    finally:
        subprocess.run([*start, "-m", "immediate", "stop"], capture_output=True)
        shutil.rmtree(home, ignore_errors=True)


_VIEWER = """
import json, sys
from tenant_events.store.archive_catalog import Lake
from tenant_events.store.archive_lake import TeamArchive
from tenant_events.store.archive_reader import ArchiveReader
from tenant_events.values.events import EventFilter
from pathlib import Path
lake = Lake(sys.argv[1], sys.argv[2])
team = TeamArchive(lake)
reader = ArchiveReader(Path(sys.argv[2]))
stop = Path(sys.argv[3])
while True:
    last = stop.exists()
    snap = reader.use(team.snapshot())
    if snap.files:
        events = reader.walk(snap, EventFilter(), {}, 0, snap.upto + 1, snap.rows + 10, False)
        count = reader.count(snap, EventFilter(), {})
        print(json.dumps([snap.rows, count, [e.seq for e in events], [e.event_id for e in events]]), flush=True)
    if last:
        break
"""


def test_the_relay_moves_into_the_lake_while_two_viewers_read_whole_moves_only(postgres, tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    catalog = postgres()
    lake = Lake(catalog, str(shared))
    rows = history(2400, time.time() - 90 * DAY, 90 * DAY / 2400, seed=3)
    relay, single = tmp_path / "relay.sqlite3", tmp_path / "single.sqlite3"
    for path in (relay, single):
        writer = StoreWriter(path)
        for at in range(0, len(rows), 400):
            writer.commit_sync(Batch(events=rows[at : at + 400]))
        writer.index_all_sync()
        writer.close()
    stop = tmp_path / "stop"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "desktop"), *sys.path])}
    viewers = [
        subprocess.Popen(
            [sys.executable, "-c", _VIEWER, catalog, str(shared), str(stop)],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    writer = StoreWriter(relay)
    try:
        done = keep(writer, Retention(keep_live_days=30, settle_seconds=0), move_rows=250, lake=lake)
        assert done.moved > 1200 and done.files_written >= 5
    finally:
        writer.close()
        stop.touch()
    seen = []
    for viewer in viewers:
        out, _err = viewer.communicate(timeout=300)
        assert viewer.returncode == 0
        seen.append([json.loads(line) for line in out.splitlines()])  # nothing else on stdout
    by_seq = {i + 1: r.event_id for i, r in enumerate(rows)}
    for reads in seen:
        assert len(reads) >= 2, "a viewer read the lake at least twice while it filled"
        for rows_listed, count, seqs, ids in reads:
            # whole moves only: the rows the moves list, each once, in order, the relay's events
            assert count == rows_listed == len(seqs) == len(set(seqs))
            assert seqs == list(range(1, len(seqs) + 1))
            assert ids == [by_seq[s] for s in seqs]
        assert reads[-1][0] == done.moved
    with EventReader(relay) as a, EventReader(single) as b:
        assert a.archived_upto() == done.moved
        assert [e for e, _r in a.export_iter()] == [e for e, _r in b.export_iter()]
        for f in (
            EventFilter(text="ada"),
            EventFilter(query="type:user.* -purpose:test"),
            EventFilter(query="ip:203.0.113.7"),
        ):
            assert a.count(f) == b.count(f)
            assert [e.seq for e in a.page_before(f, None, 50)] == [e.seq for e in b.page_before(f, None, 50)]


def test_a_move_the_lake_already_holds_is_not_written_twice(postgres, tmp_path):
    lake = Lake(postgres(), str(tmp_path / "shared2"))
    (tmp_path / "shared2").mkdir()
    made = history(300, time.time() - 60 * DAY, 60 * DAY / 300, seed=9)
    rows: list[LiveRow] = [
        (
            i + 1,
            r.event_id,
            r.offset,
            r.type,
            r.time,
            r.time_ms,
            r.source,
            r.tenant,
            r.purpose,
            None,
            r.raw,
            r.received_at,
        )
        for i, r in enumerate(made)
    ]
    first = write_lake(lake, rows[:200])
    again = write_lake(lake, rows[:250])  # a crash after the lake's commit: the next move overlaps it
    assert (first.file.first_seq, first.file.last_seq, again.file.last_seq) == (1, 200, 250)
    from tenant_events.store import duck
    from tenant_events.store.archive_lake import attach

    alias = attach(lake, read_only=False)
    cur = duck.cursor()
    counts = cur.execute(f"SELECT count(*), count(DISTINCT seq) FROM {alias}.events").fetchone()
    moves = cur.execute(f"SELECT first_seq, last_seq FROM {alias}.moves ORDER BY 1").fetchall()
    assert counts == (250, 250) and moves == [(1, 200), (201, 250)]
