"""The live tier's disk as simulated days pass: bounded by its setting, or growing with the history?

Builds two tenant databases from the simulator's tenant life (seeded, every event type), a simulated day at a
time, each event stored as it happened (received at its own time) through the real StoreWriter and indexed as
the idle-time indexer does (full-text, entity directory, access history):

  kept   the archive's upkeep runs after each day (store/archive_keeper.py: events older than --keep-live move
         to the archive, the access history older than it is settled there, store/access_settle.py), and then
         the writer has the rest of the day idle (its idle work: the moved rows out of the live full-text index,
         and the index merged in short steps once enough left it, store/fts_merge.py: the longest step listed)
  peer   no upkeep: everything stays live, as a store without an archive keeps it

Every --every days it lists, for each: the live file's bytes in use (its pages less the free list: SQLite reuses
freed pages, so the file itself stops growing where its use does), the biggest tables and indexes (dbstat), the
rows of the access history, and the archive folder's bytes. The last lines list each table's growth over the last
half of the days: a table of the kept store that grows there grows with the history, not with the setting.

    .venv/bin/python bench/live_disk.py --days 120 --per-day 2000 --keep-live 30
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import orjson

DAY = 86400.0
MiB = 1024 * 1024
HISTORY = ("access_spans", "access_marks", "access_ends")


def days(n_days: int, per_day: int, seed: int) -> Iterator[tuple[float, list[object]]]:
    from tenant_events.simulator.generator import TenantLife
    from tenant_events.simulator.world import iso_ms
    from tenant_events.store import EventRow
    from tenant_events.wire import EventMessage, decode_frame

    life = TenantLife(seed, tenant_id="ten_BenchTenant00001")
    rng = random.Random(seed)
    start = datetime(2026, 1, 1, tzinfo=UTC).timestamp()
    ts, n = start, 0
    for day in range(n_days):
        end = start + (day + 1) * DAY
        rows = []
        while (ts := ts + rng.expovariate(per_day / DAY)) < end:
            kind, data = life.next_event(ts)
            env = {"specversion": "1.0", "type": kind, "source": "urn:sim:bench", "id": f"evt_{n:016d}",
                   "time": iso_ms(ts), "data": data, "xtenant": "bench", "xstream": "est_" + "b" * 16}  # fmt: skip
            raw = orjson.dumps({"offset": f"o{n}", "event": env}).decode()
            message = decode_frame(kind, raw)
            assert isinstance(message, EventMessage)
            rows.append(EventRow.from_message(message, raw, ts))
            n += 1
        yield end, rows


def idle(path: Path, limit: float = 120.0) -> float:
    """Let the writer have the rest of the simulated day idle, as a live stream's writer has most of it: until
    its idle work is done (the moved rows out of the live full-text index, and the index merged when enough
    left it) or `limit` s; returns the wait."""
    from tenant_events.store import fts_merge

    started = time.perf_counter()
    while time.perf_counter() - started < limit:
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
        try:
            left = conn.execute("SELECT count(*) FROM archive_files WHERE fts_upto >= first_seq").fetchone()[
                0
            ]
            merging = fts_merge.due(conn)
        finally:
            conn.close()
        if not left and not merging:
            break
        time.sleep(0.2)
    return time.perf_counter() - started


def measure(path: Path) -> dict[str, int]:
    """Bytes in use of the file, per table or index (dbstat), rows of the access history, archive bytes."""
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        pages, free, size = (
            conn.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_count", "freelist_count", "page_size")
        )
        out = {"file in use": (pages - free) * size}
        for name, used in conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"):
            out[f"  {name}"] = int(used)
        for table in HISTORY:
            out[f"rows {table}"] = conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    finally:
        conn.close()
    folder = path.with_name(path.stem + ".archive")
    out["archive folder"] = (
        sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.exists() else 0
    )
    return out


def table(day: int, stats: dict[str, dict[str, int]], top: int) -> None:
    names = sorted(stats["peer"], key=lambda k: -stats["peer"][k])
    shown = [k for k in names if not k.startswith("  ")] + [k for k in names if k.startswith("  ")][:top]
    print(f"\nday {day} | kept | peer (all live)\n|---|---:|---:|")
    for key in shown:
        kept, peer = stats["kept"].get(key, 0), stats["peer"].get(key, 0)
        rows = key.startswith("rows")
        print(
            f"| {key} | {kept if rows else kept / MiB:,.{0 if rows else 2}f} | {peer if rows else peer / MiB:,.{0 if rows else 2}f} |"
        )
    sys.stdout.flush()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--days", type=int, default=120)
    ap.add_argument("--per-day", type=int, default=2000, help="events a simulated day (on average)")
    ap.add_argument("--keep-live", type=float, default=30.0, help="days (the live tier's setting)")
    ap.add_argument("--every", type=int, default=15, help="list the figures every this many days")
    ap.add_argument("--top", type=int, default=12, help="tables and indexes listed")
    ap.add_argument("--dir", type=Path, help="build here (default: a temporary folder, removed)")
    args = ap.parse_args()
    from tenant_events.store import Batch, StoreWriter
    from tenant_events.store.archive_keeper import keep
    from tenant_events.values.retention import Retention

    root = args.dir or Path(tempfile.mkdtemp(prefix="bench-live-disk-"))
    root.mkdir(parents=True, exist_ok=True)
    paths = {"kept": root / "kept.sqlite3", "peer": root / "peer.sqlite3"}
    assert not any(p.exists() for p in paths.values()), f"{root} holds a build already"
    writers = {k: StoreWriter(p) for k, p in paths.items()}
    policy = Retention(keep_live_days=args.keep_live, settle_seconds=0)
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {args.days} days of "
          f"~{args.per_day} events, live tier {args.keep_live:g} days", flush=True)  # fmt: skip
    kept_s, idle_s, stored, history = 0.0, 0.0, 0, {}
    try:
        for day, (end, rows) in enumerate(days(args.days, args.per_day, seed=11), start=1):
            for writer in writers.values():
                for at in range(0, len(rows), 1000):
                    writer.commit_sync(Batch(events=rows[at : at + 1000], cursor=f"{day}.{at}"))  # type: ignore[arg-type]
                writer.index_all_sync()
            stored += len(rows)
            t0 = time.perf_counter()
            keep(writers["kept"], policy, now=end)
            kept_s += time.perf_counter() - t0
            idle_s += idle(paths["kept"])
            if day % args.every == 0 or day == args.days:
                stats = {k: measure(p) for k, p in paths.items()}
                history[day] = stats
                table(day, stats, args.top)
                print(f"({stored:,} events stored; upkeep {kept_s:.1f} s and idle work {idle_s:.1f} s so far; "
                      f"longest merge step of the live index {writers['kept'].merger.longest_step * 1000:.0f} ms; "
                      f"load {os.getloadavg()[0]:.2f})", flush=True)  # fmt: skip
    finally:
        for writer in writers.values():
            writer.close()
    listed = sorted(history)
    half = min(listed, key=lambda d: abs(d - args.days / 2))
    print(f"\ngrowth from day {half} to day {listed[-1]} | kept | peer\n|---|---:|---:|")
    for key in ("file in use", *(f"rows {t}" for t in HISTORY)):
        a, b = (history[listed[-1]][k][key] / max(1, history[half][k][key]) for k in ("kept", "peer"))
        print(f"| {key} | x{a:.2f} | x{b:.2f} |")
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; build kept in {root}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
