"""Where the alert rules could run during a catch-up, measured against the engine alone in the same run.

The app evaluates the rules on the store's writer thread after each commit (bench/ingest.py, consumer "rules"):
the next batches wait while the rules run. This script times the other places they could run, to tell which
design can reach the rules consumer's goal (≥ 85 % of the engine's rate):

  writer    as the app does: on the writer thread, after each commit
  thread    on a second writer (thread and connection) of the same process, following the engine's commits
  process   in a process of its own, following the store on disk (its own connection, reading committed rows
            back from the table)

Each placement's time runs from the engine's start until every stored event is evaluated.

    .venv/bin/python bench/rules_placement.py --events 100000 --runs 3
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import sim_process

OLD = "2000-01-01T00:00:00Z"
PLACES = ("writer", "thread", "process")


def _evaluator() -> Any:
    from tenant_events.alert_settings import AlertSettings
    from tenant_events.alerts.from_settings import build_evaluator

    return build_evaluator(AlertSettings(), "bench")


async def _engine(url: str, token: str, n: int, db: Path, place: str | None) -> float:
    """Seconds until `n` events are stored and (with a place in this process) evaluated."""
    from tenant_events.alerts.runner import AlertRunner
    from tenant_events.store import StoreWriter
    from tenant_events.stream.engine import EngineConfig, StreamEngine
    from tenant_events.stream.tokens import StaticTokenProvider

    writer = StoreWriter(db)
    engine = StreamEngine(
        EngineConfig(url + "/api/v2", from_timestamp=OLD, name="bench"), StaticTokenProvider(token), writer
    )
    second = StoreWriter(db) if place == "thread" else None
    runner = None
    if place in ("writer", "thread"):
        target = second if second is not None else writer
        runner = AlertRunner(_evaluator(), lambda: target)
        engine.on_commit.append(runner.kick)
    done = asyncio.Event()
    engine.on_commit.append(lambda _r: done.set() if engine.stats.events_stored >= n else None)
    started = time.perf_counter()
    task = asyncio.create_task(engine.run())
    await done.wait()
    if runner is not None:
        while (runner.evaluator.watermark or 0) < n:
            runner.kick()
            await runner.idle()
    elapsed = time.perf_counter() - started
    engine.stop()
    await task
    writer.close()
    if second is not None:
        second.close()
    return elapsed


def _follow(db: Path, n: int, ready: Any, finished: Any) -> None:
    """The process placement's child: evaluate what the engine commits until `n` events are evaluated, on a
    connection of its own (no StoreWriter: its idle-time indexer would be a second one writing the same file)."""
    from tenant_events.store.alerts_table import AlertLedger
    from tenant_events.store.database_open import open_database

    conn, _notice = open_database(db)
    ledger = AlertLedger(conn)
    evaluator = _evaluator()
    ready.set()  # imported and open: the clock starts once this is so
    while (evaluator.watermark or 0) < n:
        if not evaluator.step(ledger).evaluated:
            time.sleep(0.005)  # caught up with the engine's commits: look again shortly
    finished.value = time.perf_counter()  # CLOCK_MONOTONIC: comparable across processes on Linux
    conn.close()


def measure(url: str, token: str, n: int, place: str | None) -> float:
    tmp = Path(tempfile.mkdtemp(prefix="bench-placement-"))
    db = tmp / "bench.sqlite3"
    try:
        if place != "process":
            return asyncio.run(_engine(url, token, n, db, place))
        from tenant_events.store import StoreWriter

        StoreWriter(db).close()  # the schema, made before either process opens it (untimed)
        finished, ready = mp.Value("d", 0.0), mp.Event()
        child = mp.Process(target=_follow, args=(db, n, ready, finished))
        child.start()
        if not ready.wait(60):
            raise SystemExit("the rules process did not start")
        started = time.perf_counter()
        asyncio.run(_engine(url, token, n, db, None))
        child.join()
        if child.exitcode != 0:
            raise SystemExit(f"the rules process failed ({child.exitcode})")
        return float(finished.value) - started
    finally:
        shutil.rmtree(tmp)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", nargs="*", default=list(PLACES), choices=PLACES)
    args = ap.parse_args()
    sim, url = sim_process.start_simulator(
        args.events, "--real-names", "--burst-every", "0", "--heartbeat", "1"
    )
    try:
        token = sim_process.admin_token(url)
        for run in range(args.runs):
            alone = measure(url, token, args.events, None)
            cells = [f"engine {args.events / alone:,.0f}/s"]
            for place in args.only:
                seconds = measure(url, token, args.events, place)
                cells.append(f"{place} {args.events / seconds:,.0f}/s ({alone / seconds:.2f})")
            print(f"run {run + 1}: " + ", ".join(cells), flush=True)
    finally:
        sim.terminate()
        sim.wait(timeout=30)
    print("(in brackets: the rate over the engine's alone in the same run; goal ≥ 0.85)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
