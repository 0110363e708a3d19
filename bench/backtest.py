"""Every built-in rule backtested over a big store's whole history (`tenant-events rules backtest RULE --since
all`): the time each takes, and its alerts per day against its noise budget.

Builds one tenant database of --events events from the simulator's own tenant generator (bench/entities.py:
seeded, every event type, through the real StoreWriter, then indexed as the idle indexer does), spread over
--days days of event time, or reuses it with --keep. With --live-days N, a copy of it has every event older than
the newest N days of event time moved to the archive tier by the store's own keeper (as the app's retention does:
a real store holds most of its history there), and that copy is measured. Then, --runs times each:

  per rule   each built-in rule on its own, as `rules backtest RULE` and the rules editor's Backtest run it
             (alerts/backtest.py over AlertInbox.history_rows, both tiers)
  the pack   every built-in rule in one pass, as `rules test` checks the budgets and a file of rules is
             backtested (each event read and decoded once for all)

and prints the median time (wall, and the process's CPU: the figure a loaded machine skews least) with every
run, the alerts, the days with alerts, the busiest day, and the days over
the rule's budget (`max_alerts_per_day`); --per-day FILE writes every rule's alerts per day (JSON).

    .venv/bin/python bench/backtest.py --events 1000000 --days 180 --runs 3 --keep /tmp/bench-backtest
    .venv/bin/python bench/backtest.py --events 1000000 --days 180 --live-days 30 --keep /tmp/bench-backtest

Goal: a rule backtests over a 1M-event store in seconds (< 10 s each on two cores).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def tiered_copy(path: Path, live_days: float) -> Path:
    """A copy of the store with every event older than the newest `live_days` of event time in the archive."""
    from tenant_events.store import StoreWriter
    from tenant_events.store.archive_keeper import keep
    from tenant_events.values.retention import Retention

    copy = path.with_name(f"{path.stem}-live{live_days:g}d.sqlite3")
    done_mark = copy.with_suffix(".moved")
    if done_mark.exists():
        return copy
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        newest_ms = conn.execute("SELECT max(time_ms) FROM events").fetchone()[0]
    finally:
        conn.close()
    shutil.copyfile(path, copy)
    now = time.time()
    keep_days = (now - (newest_ms / 1000 - live_days * 86400)) / 86400  # the cut by event time, not by now
    started = time.perf_counter()
    writer = StoreWriter(copy)
    try:
        done = keep(writer, Retention(keep_live_days=keep_days, settle_seconds=0), now)
    finally:
        writer.close()
    done_mark.write_text(f"{done.moved}\n")
    print(f"moved {done.moved:,} events to the archive in {time.perf_counter() - started:.0f} s: {copy}")
    return copy


def _summary(report: Any) -> str:
    counts = sorted(report.days.values())
    busiest = max(report.days.items(), key=lambda kv: kv[1], default=("-", 0))
    median = statistics.median(counts) if counts else 0
    over = f"{len(report.over)} over {report.budget}" if report.budget is not None else "no budget"
    return f"{report.alerts:>7,} {len(report.days):>5} {median:>6g} {busiest[0]:>12} ({busiest[1]:>4})  {over:<13}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--days", type=float, default=180, help="days of event time the events span")
    ap.add_argument("--live-days", type=float, help="measure a copy with all but these last days archived")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep", type=Path, help="keep (and reuse) the store in this directory")
    ap.add_argument("--rules", nargs="*", help="only these rule ids (default: every built-in rule)")
    ap.add_argument("--per-day", type=Path, help="write every rule's alerts per day to this JSON file")
    args = ap.parse_args()
    from tenant_events.alert_settings import WorkingHours
    from tenant_events.alerts.backtest import backtests
    from tenant_events.alerts.builtin_rules import BUILTIN_RULES
    from tenant_events.store.alerts_inbox import AlertInbox

    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-backtest-"))
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"backtest-{args.events}-{args.days:g}d.sqlite3"
    print("uptime at start:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    if not path.exists():
        from entities import build  # (bench/entities.py: the simulator's tenant life through the real writer)

        started = time.perf_counter()
        build(path, args.events, seed=1, mean_gap_s=args.days * 86400 / args.events)
        print(f"built {args.events:,} events in {time.perf_counter() - started:.0f} s: {path}", flush=True)
    if args.live_days is not None:
        path = tiered_copy(path, args.live_days)
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        live = conn.execute("SELECT count(*) FROM events").fetchone()[0]
        files = conn.execute("SELECT count(*), coalesce(sum(rows), 0) FROM archive_files").fetchone()
    finally:
        conn.close()
    print(f"store: {live:,} events live, {files[1]:,} archived in {files[0]} files", flush=True)
    hours = WorkingHours()
    rules = [r for r in BUILTIN_RULES if not args.rules or r.id in args.rules]
    per_day: dict[str, dict[str, int]] = {}
    head = f"{'alerts':>7} {'days':>5} {'median':>6} {'busiest day':>19}  {'budget':<13}"
    print(f"\n{'rule':<26} {'median':>8} {'cpu':>8}  {head}  runs (s)")
    with AlertInbox(path) as inbox:
        for rule in rules:
            times: list[float] = []
            cpu: list[float] = []
            for _ in range(args.runs):
                started = time.process_time()
                [report] = backtests(inbox, [rule], hours=hours, profile="bench", since_ms=0)
                cpu.append(time.process_time() - started)
                times.append(report.seconds)
            per_day[rule.id] = report.days
            runs = " ".join(f"{t:.2f}" for t in times)
            print(
                f"{rule.id:<26} {statistics.median(times):>7.2f}s {statistics.median(cpu):>7.2f}s  "
                f"{_summary(report)}  {runs}",
                flush=True,
            )
        times, cpu = [], []
        for _ in range(args.runs):
            started = time.process_time()
            reports = backtests(inbox, rules, hours=hours, profile="bench", since_ms=0)
            cpu.append(time.process_time() - started)
            times.append(reports[0].seconds)
            assert all(r.days == per_day[r.rule_id] for r in reports), "one pass differs from each alone"
        runs = " ".join(f"{t:.2f}" for t in times)
        print(
            f"{'the pack in one pass':<26} {statistics.median(times):>7.2f}s {statistics.median(cpu):>7.2f}s"
            f"  {len(rules)} rules  {runs}"
        )
    if args.per_day is not None:
        args.per_day.write_text(json.dumps(per_day, indent=1), encoding="utf-8")
        print(f"alerts per day of each rule: {args.per_day}")
    print("uptime at end:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
