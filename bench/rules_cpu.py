"""The alert rules' CPU per event over a stored backlog, in one process: no engine, no simulator while timing.

`--fill` stores a backlog of --events simulator events once (the stream engine into a database file, as the
app does); each run then copies that file and evaluates the whole built-in pack over it as the rules' process
does (its own connection, Evaluator.step until every event is evaluated), timing the process's CPU:

    .venv/bin/python bench/rules_cpu.py --fill /tmp/rules-300k.sqlite3 --events 300000
    .venv/bin/python bench/rules_cpu.py --db /tmp/rules-300k.sqlite3 --runs 5
    .venv/bin/python bench/rules_cpu.py --db /tmp/rules-300k.sqlite3 --runs 5 --baseline /tmp/main/desktop

With --baseline (the `desktop` folder of another checkout, e.g. before a change) each run evaluates the same
copy with both, alternately, each in a subprocess of its own: before/after pairs on the same load. --profile
FILE writes a cProfile of one run instead. Each run prints its CPU seconds, µs per event, the alerts raised
(which must be the same for both) and the load average.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

OLD = "2000-01-01T00:00:00Z"


async def _fill(db: Path, n: int) -> None:
    import sim_process
    from tenant_events.store import StoreWriter
    from tenant_events.stream.engine import EngineConfig, StreamEngine
    from tenant_events.stream.tokens import StaticTokenProvider

    sim, url = sim_process.start_simulator(n, "--real-names", "--burst-every", "0", "--heartbeat", "1")
    try:
        writer = StoreWriter(db)
        engine = StreamEngine(
            EngineConfig(url + "/api/v2", from_timestamp=OLD, name="bench"),
            StaticTokenProvider(sim_process.admin_token(url)),
            writer,
        )
        done = asyncio.Event()
        engine.on_commit.append(lambda _r: done.set() if engine.stats.events_stored >= n else None)
        task = asyncio.create_task(engine.run())
        await done.wait()
        engine.stop()
        await task
        writer.close()
    finally:
        sim.terminate()
        sim.wait(timeout=30)


def evaluate(db: Path, profile: str | None) -> dict[str, Any]:
    """Evaluate every stored event of `db` with the built-in pack, as the rules' process does."""
    from tenant_events.alert_settings import AlertSettings
    from tenant_events.alerts.from_settings import build_evaluator
    from tenant_events.store.alert_connection import AlertConnection

    try:  # the rules' process's collector settings, where the checkout has them
        from tenant_events.alerts.gc_policy import for_rules
    except ImportError:
        pass
    else:
        for_rules()
    parts = _time_parts()
    evaluator = build_evaluator(AlertSettings(), "bench", strict=False)
    store = AlertConnection(db)
    raised = updated = evaluated = steps = 0
    prof = None
    if profile:
        import cProfile

        prof = cProfile.Profile(time.thread_time)  # CPU: the shared machine makes wall time noise
        prof.enable()
    cpu, wall = time.process_time(), time.perf_counter()
    while True:
        result = store.run_alert_job(evaluator.step).result()
        steps += 1
        raised += len(result.raised)
        updated += len(result.updated)
        evaluated += result.evaluated
        if not result.evaluated:
            break
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    if prof is not None:
        prof.disable()
        prof.dump_stats(profile)
    rows = store.run_alert_job(
        lambda ledger: ledger.in_transaction(
            lambda conn: conn.execute(
                "SELECT rule_id, rule_name, occurrences, event_count, first_seq, last_seq, type_counts, detail,"
                " group_key, (SELECT group_concat(seq) FROM alert_events e WHERE e.alert_id = a.id)"
                " FROM alerts a ORDER BY id"
            ).fetchall()
        )
    ).result()
    store.close()
    return {
        "cpu": cpu,
        "wall": wall,
        "events": evaluated,
        "raised": raised,
        "updated": updated,
        "alerts": [list(r) for r in rows],
        "parts": parts,
    }


def _time_parts() -> dict[str, float]:
    """CPU seconds in each part of a step (a part nested in another counts for the inner one only)."""
    from tenant_events.alerts import evaluator
    from tenant_events.alerts.rule_engine import RuleEngine
    from tenant_events.store.alerts_table import AlertLedger

    spent: dict[str, float] = {}
    nested: list[float] = [0.0]

    def timed(owner: Any, attribute: str, part: str) -> None:
        inner = getattr(owner, attribute)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            started = time.thread_time()
            nested.append(0.0)
            try:
                return inner(*args, **kwargs)
            finally:
                took = time.thread_time() - started
                spent[part] = spent.get(part, 0.0) + took - nested.pop()
                nested[-1] += took

        setattr(owner, attribute, wrapper)

    timed(AlertLedger, "rows", "rows")
    timed(RuleEngine, "feed", "feed")
    timed(evaluator, "_details", "names")
    timed(AlertLedger, "commit", "commit")
    timed(AlertLedger, "alerts_by_id", "commit")
    return spent


def _run_in(desktop: Path | None, db: Path, profile: str | None) -> dict[str, Any]:
    """One evaluation in a subprocess importing `tenant_events` from `desktop` (this checkout's: None)."""
    env = dict(os.environ)
    if desktop is not None:
        env["PYTHONPATH"] = str(desktop)
    cmd = [sys.executable, __file__, "--db", str(db), "--child"] + (["--profile", profile] if profile else [])
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fill", type=Path, help="store a backlog into this new database file, then stop")
    ap.add_argument("--events", type=int, default=300_000)
    ap.add_argument("--db", type=Path, help="a database --fill made (copied for each run, never changed)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--baseline", type=Path, help="the desktop folder of another checkout, run alternately")
    ap.add_argument("--profile", help="write a cProfile of one run to this file")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.fill:
        asyncio.run(_fill(args.fill, args.events))
        print(f"stored {args.events:,} events into {args.fill}")
        return 0
    if args.db is None:
        ap.error("--db or --fill")
    if args.child:
        print(json.dumps(evaluate(args.db, args.profile)))
        return 0
    sides: list[tuple[str, Path | None]] = [("this", None)]
    if args.baseline:
        sides.append(("baseline", args.baseline))
    per: dict[str, list[float]] = {name: [] for name, _ in sides}
    tmp = Path(tempfile.mkdtemp(prefix="bench-rules-cpu-"))
    try:
        for run in range(args.runs if not args.profile else 1):
            order = sides if run % 2 == 0 else sides[::-1]
            for name, desktop in order:
                copy = tmp / "run.sqlite3"
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{copy}{suffix}").unlink(missing_ok=True)
                shutil.copyfile(args.db, copy)
                r = _run_in(desktop, copy, args.profile)
                us = r["cpu"] / max(r["events"], 1) * 1e6
                per[name].append(us)
                alerts = len(
                    r["alerts"]
                )  # (their crc32 below: every field the rules decide, and their events)
                parts = ", ".join(f"{k} {v / r['events'] * 1e6:.2f}" for k, v in sorted(r["parts"].items()))
                print(
                    f"run {run + 1} {name}: {r['events']:,} events, CPU {r['cpu']:.2f} s = {us:.2f} µs/event "
                    f"(wall {r['wall']:.2f} s); {alerts} alerts {zlib.crc32(json.dumps(r['alerts']).encode()):08x}, "
                    f"raised {r['raised']}, updated {r['updated']}; µs/event in {parts}; load {os.getloadavg()[0]:.2f}",
                    flush=True,
                )
    finally:
        shutil.rmtree(tmp)
    for name, values in per.items():
        if values:
            print(f"{name}: median {statistics.median(values):.2f} µs/event over {len(values)} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
