"""Where the archive writer's CPU goes, per event: the records (JSON parsed, field values and their rows, time),
FTS5's tokens, DuckDB writing the events' file and the token file (field rows and tokens), each step timed
alone in this process (its CPU time, with DuckDB's threads) over the same simulator events as bench/archive.py
makes. Every run is listed.

    .venv/bin/python bench/archive_steps.py --events 100000 --runs 3
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from archive import rows_of_month


def run(rows: list[tuple[Any, ...]]) -> dict[str, float]:
    """One pass of each step over `rows`; µs of CPU per event."""
    from tenant_events.store import archive_build as ab
    from tenant_events.store import archive_layout as layout
    from tenant_events.store import duck

    live = rows
    n = len(live)
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="archive-steps-") as folder:
        work = Path(folder)
        t = time.process_time()
        made = ab.scratch([live], work, cues=True)  # as write_month: with the field rows' cues
        whole = time.process_time() - t
        summaries = [r[9] for r in live]
        t = time.process_time()
        with ab.collector_paused():
            postings = ab.Postings()
            ab._fill(postings, live, summaries, [ab.indexed_raw(r[10]) for r in live])
            with (work / "again.jsonl").open("wb") as f:
                ab._vocabulary(postings, f)
        out["tokens (FTS5)"] = time.process_time() - t
        out["records"] = whole - out["tokens (FTS5)"]
        cur = ab.ordered_cursor()
        try:
            for name, select, group in (
                ("events' file", ab.events_select(work), layout.ROW_GROUP),
                ("tokens' file", ab.tokens_select(work, made.longest), layout.TOKEN_ROW_GROUP),
            ):
                t = time.process_time()
                target = duck.literal(str(work / "out.parquet"))
                cur.execute(f"COPY ({select}) TO {target} ({layout.PARQUET_OPTIONS}, ROW_GROUP_SIZE {group})")
                out[name] = time.process_time() - t
        finally:
            cur.close()
    return {k: v / n * 1e6 for k, v in out.items()}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    rows = list(rows_of_month(7, 1, args.events, 1_700_000_000.0, 30 * 86400.0))
    runs = [run(rows) for _ in range(args.runs)]
    print(f"{args.events:,} simulator events, µs of CPU per event (median; every run):")
    for step in runs[0]:
        values = [r[step] for r in runs]
        listed = ", ".join(f"{v:.1f}" for v in values)
        print(f"  {step:<14} {statistics.median(values):6.1f}   ({listed})")
    total = [sum(r.values()) for r in runs]
    print(f"  {'all':<14} {statistics.median(total):6.1f}   ({', '.join(f'{v:.1f}' for v in total)})")


if __name__ == "__main__":
    main()
