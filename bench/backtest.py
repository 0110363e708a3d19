"""Every built-in rule backtested over a big store's whole history (`tenant-events rules backtest RULE --since
all`): the time each takes, and its alerts per day.

Builds one tenant database of --events events from the simulator's own tenant generator (bench/entities.py:
seeded, every event type, through the real StoreWriter), spread over --days days of event time, or reuses it
with --keep. Then, for each built-in rule, --runs backtests through the same read path the CLI and the rules
editor use (alerts/backtest.py over AlertInbox.history_rows) and prints the median time with every run, the
alerts, the days with alerts and the busiest day; --per-day FILE writes every rule's alerts per day (JSON).

    .venv/bin/python bench/backtest.py --events 1000000 --days 180 --runs 3 --keep /tmp/bench-backtest

Goal: a rule backtests over a 1M-event store in seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--days", type=float, default=180, help="days of event time the events span")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep", type=Path, help="keep (and reuse) the store in this directory")
    ap.add_argument("--rules", nargs="*", help="only these rule ids (default: every built-in rule)")
    ap.add_argument("--per-day", type=Path, help="write every rule's alerts per day to this JSON file")
    args = ap.parse_args()
    from tenant_events.alert_settings import WorkingHours
    from tenant_events.alerts.backtest import backtest
    from tenant_events.alerts.builtin_rules import BUILTIN_RULES
    from tenant_events.store.alerts_inbox import AlertInbox

    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-backtest-"))
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"backtest-{args.events}-{args.days:g}d.sqlite3"
    print("load average at start:", " ".join(f"{x:.2f}" for x in os.getloadavg()), flush=True)
    if not path.exists():
        from entities import build  # (bench/entities.py: the simulator's tenant life through the real writer)

        started = time.perf_counter()
        build(path, args.events, seed=1, mean_gap_s=args.days * 86400 / args.events)
        print(f"built {args.events:,} events in {time.perf_counter() - started:.0f} s: {path}", flush=True)
    hours = WorkingHours()
    rules = [r for r in BUILTIN_RULES if not args.rules or r.id in args.rules]
    per_day: dict[str, dict[str, int]] = {}
    print(f"{'rule':<26} {'median':>8}  {'alerts':>7} {'days':>5} {'busiest day':>18}  runs (s)")
    with AlertInbox(path) as inbox:
        for rule in rules:
            times: list[float] = []
            report = None
            for _ in range(args.runs):
                report = backtest(inbox, rule, hours=hours, profile="bench", since_ms=0)
                times.append(report.seconds)
            assert report is not None
            per_day[rule.id] = report.days
            busiest = max(report.days.items(), key=lambda kv: kv[1], default=("-", 0))
            runs = " ".join(f"{t:.2f}" for t in times)
            print(
                f"{rule.id:<26} {statistics.median(times):>7.2f}s  {report.alerts:>7,} {len(report.days):>5} "
                f"{busiest[0]:>12} ({busiest[1]:>3})  {runs}",
                flush=True,
            )
    if args.per_day is not None:
        args.per_day.write_text(json.dumps(per_day, indent=1), encoding="utf-8")
        print(f"alerts per day of each rule: {args.per_day}")
    print("load average at end:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
