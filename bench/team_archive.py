"""The team archive (DuckLake, its catalog in PostgreSQL) against the local archive (Parquet files beside the
database), measured in the same run on the same history.

  move   a relay's copy of N events (made by the simulator's tenant life, spread over 90 days) moves what is older
         than 30 days: into the lake (one lake transaction a move, with the identity check that keeps a
         takeover from doubling anything) and, as the peer, into local files; events/s of each
  reads  a viewer that holds the newest third itself reads the older two thirds from the lake; its peer holds
         the same history with the older part in its own local archive. Medians of --runs of: the full count,
         a word's count, the first screen of a field filter, the histogram, one user's timeline
  intake that viewer's directory and access history take in the lake's older two thirds (store/lake_intake.py):
         lake events/s, and the next upkeep's pass over it (ms: nothing is read again)

A PostgreSQL cluster of its own is started in a temporary folder (Debian's binaries), over TCP with passwords as
a team's server would be. Every run is listed.

    .venv/bin/python bench/team_archive.py --events 20000 --runs 3
"""

from __future__ import annotations

import argparse
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "desktop"))

from helpers.fixtures_postgres import RELAY_PASSWORD, VIEWER_PASSWORD, Postgres, running_postgres  # noqa: E402
from helpers.history import history  # noqa: E402
from helpers.team_lake import filled_store  # noqa: E402
from tenant_events.store import EventReader, StoreWriter, lake_intake  # noqa: E402
from tenant_events.store.archive_keeper import keep  # noqa: E402
from tenant_events.store.archive_lake import use_password  # noqa: E402
from tenant_events.store.entity_reader import DirectoryReader  # noqa: E402
from tenant_events.values.events import EventFilter  # noqa: E402
from tenant_events.values.retention import Retention  # noqa: E402
from tenant_events.values.team_archive import Lake  # noqa: E402

DAY = 86400.0
MOVE = Retention(keep_live_days=30, settle_seconds=0)


def _moved(path: Path, now: float, lake: Lake | None) -> tuple[int, float]:
    writer = StoreWriter(path)
    try:
        start = time.perf_counter()
        done = keep(writer, MOVE, now, lake=lake, fence=(lambda: True) if lake is not None else None)
        return done.moved, time.perf_counter() - start
    finally:
        writer.close()


def _reads(path: Path, user: str) -> dict[str, float]:
    out: dict[str, float] = {}

    def timed(name: str, work: Callable[[], object]) -> None:
        start = time.perf_counter()
        work()
        out[name] = (time.perf_counter() - start) * 1000

    with EventReader(path) as reader:
        timed("count", lambda: reader.count(EventFilter()))
        timed("word count", lambda: reader.count(EventFilter(text="ada")))
        timed("first screen user:*", lambda: reader.page_before(EventFilter(query="type:user.*"), None, 256))
        timed("histogram", lambda: reader.histogram(EventFilter(), 86400))
        timed("timeline", lambda: DirectoryReader.over(reader).timeline("user", user, None, 100))
    return out


def one_run(pg: Postgres, events: int, work: Path, seed: int) -> dict[str, float]:
    name = pg.new_lake()
    shared = work / "shared"
    shared.mkdir()
    relay_lake, viewer_lake = (
        Lake(pg.catalog(name, "relay"), str(shared)),
        Lake(pg.catalog(name, "viewer"), str(shared)),
    )
    use_password(relay_lake.catalog, RELAY_PASSWORD)
    use_password(viewer_lake.catalog, VIEWER_PASSWORD)
    rows = history(events, time.time() - 90 * DAY, 90 * DAY / events, seed=seed)
    now = time.time()
    lake_moved, lake_s = _moved(filled_store(work / "relay.sqlite3", rows, relay_lake), now, relay_lake)
    local_moved, local_s = _moved(filled_store(work / "peer.sqlite3", rows), now, None)
    viewer = filled_store(work / "viewer.sqlite3", rows[len(rows) * 2 // 3 :], viewer_lake)
    found = re.findall(r'"user_id":\s*"([^"]+)"', "".join(r.raw for r in rows[:200]))
    user = found[0] if found else "nobody"
    result = {
        "moved into the lake, events/s": lake_moved / lake_s,
        "moved into local files, events/s": local_moved / local_s,
    }
    for key, ms in _reads(viewer, user).items():
        result[f"viewer over the lake: {key} (ms)"] = ms
    for key, ms in _reads(work / "peer.sqlite3", user).items():
        result[f"peer over local files: {key} (ms)"] = ms
    taken, took, held = _taken_in(viewer)
    result["viewer takes the lake in, lake events/s"] = min(lake_moved, len(rows) * 2 // 3) / took
    result["  of which its directory and history types"] = taken
    result["  its longest transaction on the writer (ms)"] = held * 1000
    result["viewer's next pass over it (ms)"] = _taken_in(viewer)[1] * 1000
    return result


def _taken_in(path: Path) -> tuple[int, float, float]:
    """Rows taken in, seconds, and the longest of its transactions on the writer's thread (seconds)."""
    writer = StoreWriter(path)
    held = [0.0]

    def on_writer(work: Callable[[sqlite3.Connection], bool]) -> bool:
        def timed(conn: sqlite3.Connection) -> bool:
            start = time.perf_counter()
            try:
                return work(conn)
            finally:
                held[0] = max(held[0], time.perf_counter() - start)

        return writer.run_archive_job(timed).result()

    try:
        start = time.perf_counter()
        taken = lake_intake.catch_up(path, on_writer)
        return taken, time.perf_counter() - start, held[0]
    finally:
        writer.close()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    runs: list[dict[str, float]] = []
    with running_postgres() as pg:
        for k in range(args.runs):
            with tempfile.TemporaryDirectory(prefix="tenant-events-team-bench-") as work:
                runs.append(one_run(pg, args.events, Path(work), seed=k + 1))
    print(f"team archive, {args.events} events, {args.runs} runs (median, then every run)")
    for key in runs[0]:
        values = [r[key] for r in runs]
        listed = ", ".join(f"{v:,.0f}" for v in values)
        print(f"  {key:48} {statistics.median(values):>10,.0f}   [{listed}]")


if __name__ == "__main__":
    main()
