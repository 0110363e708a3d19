"""Access review on a big store: a point in time and a 90-day diff (issue "Access review": bench figures).

Builds one tenant database of --events events from the simulator's own tenant generator (seeded, every event
type), spread over --days days of event time, written through the real StoreWriter and indexed as the app's idle
indexer does (full-text index, entity directory, access history). Then, medians over --runs:

  at      the review at a moment (AccessReview.at: the spans that held, their names, the roles held through
          groups, each grant's event id) at the first day, the middle, 90 days before the newest event, and now
          (goal < 1 s); and the raw read of the spans alone (AccessReader.held_at)
  diff    the review's diff over the last 90 days and over the last 7 (goal < 2 s for 90 days)
  peer    what the entity directory answers for now: every link that holds (entity_state.holding_links for each
          relation), the one "now" the app knew before
  indexer the access history's share of the idle-time indexer: the history built again from the stored events,
          CPU time per event, beside the entity directory's own rebuild of the same events (live batches of up
          to 50 events go into both in their own transaction; a catch-up's are left to the indexer)

    .venv/bin/python bench/access.py --events 1000000 --days 180 --runs 7 --keep /tmp/bench-access

With --keep the store is kept in that directory and reused when present. Every run is listed where runs disagree
by more than a third.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

DAY_MS = 86_400_000


def timed(fn: Callable[[], object], runs: int) -> tuple[float, float, list[float]]:
    """Median wall ms, median CPU ms of this process, and every run's wall ms."""
    walls, cpus = [], []
    for _ in range(runs):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        walls.append((time.perf_counter() - t0) * 1000)
        cpus.append((time.process_time() - c0) * 1000)
    return statistics.median(walls), statistics.median(cpus), walls


def row(name: str, fn: Callable[[], object], runs: int, goal_ms: float | None = None) -> None:
    """One table row: the wall-clock median against the goal, and the CPU it took (on a machine shared with other
    work the wall clock also counts the waits for a core)."""
    median, cpu, times = timed(fn, runs)
    spread = max(times) > 1.33 * min(times)
    runs_text = f" (runs: {', '.join(f'{t:.0f}' for t in times)})" if spread else ""
    goal = f"{'yes' if median < goal_ms else 'NO'} (< {goal_ms:,.0f})" if goal_ms else ""
    print(f"| {name} | {median:,.1f} | {cpu:,.1f} | {goal} |{runs_text}", flush=True)


def queries(path: Path, runs: int) -> None:
    from tenant_events.access.review import AccessReview, moment_stamp
    from tenant_events.store.access_reader import AccessReader
    from tenant_events.store.directory import Rel
    from tenant_events.store.entity_state import holding_links

    with AccessReader(path) as reader:
        review = AccessReview("bench", reader)
        reach = reader.held_at(moment_stamp(None)).reach
        assert reach.first_ms is not None and reach.newest_ms is not None and reach.behind == 0
        first, newest = reach.first_ms, reach.newest_ms
        conn = sqlite3.connect(path)
        spans = conn.execute("SELECT count(*) FROM access_spans").fetchone()[0]
        days = (newest - first) / DAY_MS
        print(f"\nhistory: {spans:,} spans over {days:.0f} days of event time", flush=True)
        moments = {
            "the first day": first + DAY_MS,
            "the middle": (first + newest) // 2,
            "90 days before the newest event": newest - 90 * DAY_MS,
            "now": None,
        }
        print("| point in time | median ms | CPU ms | goal |\n|---|---:|---:|---|")
        for name, at in moments.items():
            snapshot = review.at(at)
            row(
                f"review at {name} ({len(snapshot.grants):,} grants)", lambda at=at: review.at(at), runs, 1000
            )
        for name, at in moments.items():
            held = reader.held_at(moment_stamp(at)).spans
            row(
                f"… the spans alone, at {name} ({len(held):,})",
                lambda at=at: reader.held_at(moment_stamp(at)),
                runs,
            )
        print("\n| diff | median ms | CPU ms | goal |\n|---|---:|---:|---|")
        for days_back, goal in ((90, 2000.0), (7, None)):
            low = newest - days_back * DAY_MS
            diff = review.diff(low, None)
            row(f"review's diff over the last {days_back} days ({len(diff.changes):,} changes)",
                lambda low=low: review.diff(low, None), runs, goal)  # fmt: skip
        print("\n| peer: the entity directory's now | median ms | CPU ms | |\n|---|---:|---:|---|")
        links = sum(len(holding_links(conn, rel)) for rel in Rel)
        row(f"every link that holds ({links:,})", lambda: [holding_links(conn, rel) for rel in Rel], runs)
        conn.close()


def indexer_cost(path: Path) -> None:
    """The history's and the directory's rebuild of the same events, CPU time per event (on a copy)."""
    from tenant_events.store import access_history, directory

    copy = path.with_name(path.stem + "-rebuild.sqlite3")
    source = sqlite3.connect(path)
    target = sqlite3.connect(copy)
    source.backup(target)
    source.close()
    target.close()
    conn = sqlite3.connect(copy, isolation_level=None)
    try:
        top = conn.execute("SELECT max(seq) FROM events").fetchone()[0]
        conn.execute("BEGIN")
        access_history.clear(conn)
        conn.execute("COMMIT")
        cpu, wall = time.process_time(), time.perf_counter()
        more = True
        while more:
            conn.execute("BEGIN IMMEDIATE")
            more = access_history.catch_up(conn, top)
            conn.execute("COMMIT")
        history = (time.process_time() - cpu, time.perf_counter() - wall)
        conn.execute("BEGIN IMMEDIATE")
        cpu, wall = time.process_time(), time.perf_counter()
        directory.rebuild(conn)
        built = (time.process_time() - cpu, time.perf_counter() - wall)
        conn.execute("COMMIT")
    finally:
        conn.close()
        for suffix in ("", "-wal", "-shm"):
            Path(str(copy) + suffix).unlink(missing_ok=True)
    print("\n| idle-time indexer, built again from the stored events | CPU s | wall s | CPU µs an event |")
    print("|---|---:|---:|---:|")
    for name, (c, w) in (("access history", history), ("peer: entity directory", built)):
        print(f"| {name} | {c:.1f} | {w:.1f} | {c / top * 1e6:.1f} |")
    print(
        "(a catch-up's large batches leave the history to the idle-time indexer: ingest pays nothing for it)"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--days", type=float, default=180, help="days of event time the events span")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--keep", type=Path, help="keep (and reuse) the store in this directory")
    ap.add_argument("--no-indexer", action="store_true", help="leave out the indexer's cost (minutes)")
    args = ap.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-access-"))
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"access-{args.events}-{args.days:g}d.sqlite3"
    print("load average at start:", " ".join(f"{x:.2f}" for x in os.getloadavg()), flush=True)
    if not path.exists():
        from entities import build  # (bench/entities.py: the simulator's tenant life through the real writer)

        build(path, args.events, seed=1, mean_gap_s=args.days * 86400 / args.events)
    queries(path, args.runs)
    if not args.no_indexer:
        indexer_cost(path)
    print("load average at end:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
