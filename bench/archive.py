"""A year of a tenant's history in two tiers: build it from the simulator, then measure the archive's goals.

  build      events made by the bundled simulator's tenant life (its generator, no HTTP), decoded by the
             client's wire code, a month at a time in two worker processes; each month's archive file
             written by the store's own writer (store/archive_build.py's write_chunks) as one file, given
             in chunks of 250,000 events, none merged (merging is the mover's files': archive_merge.py;
             its seconds are listed as 0). "build rate" is events over the seconds the writer spent
             (generation not counted), per core and for both workers together; generation is listed
             beside it. Goal >= 50k events/s. The writer's CPU time (its process with DuckDB's threads) is listed
             too: on a shared machine the seconds measure the other jobs as much as the writer.
  size       archive bytes per event (goal <= 200 B), and the live tier's database for its days (bounded: the
             live days' events, indexed, as the writer keeps them)
  reads      over EventReader (both tiers, as the window and the commands read), medians of --runs:
             first screen of each filter (256 newest matches; goal < 300 ms), its full count and histogram
             (goal < 1 s), a full-text term (count and first screen; goal < 2 s), one user's timeline over the
             year (goal < 500 ms)
  window     the real MainWindow (offscreen) opening the tenant: the longest stretch its thread was held,
             by a 5 ms timer's late ticks, while the first page, counts, histogram and page keys load
             (goal: never > 100 ms), and the thread's CPU time in it and the most in any one stretch (the
             window's own work; on a loaded machine the rest of a stretch is the wait for a core); the
             tenant's readers are made before, as the app makes them before its window shows, and their
             making (DuckDB's import) is listed apart

    .venv/bin/python bench/archive.py --events 30000000 --dir /tmp/year      # builds once into --dir, reuses
    .venv/bin/python bench/archive.py --events 3000000 --dir /tmp/year-3m --runs 3

The live tier here is the last --live-days of the year (default 2) stored through the store's writer; the
archive's seqs are numbered before it, as the mover would have left them. Every run is listed.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import multiprocessing
import os
import random
import statistics
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
DAY = 86400.0
CHUNK = 250_000


def rows_of_month(
    seed: int, first_seq: int, n: int, start: float, seconds: float
) -> Iterator[tuple[Any, ...]]:
    """`n` events of one month as live rows (seq first), from the simulator's tenant life and the client's
    decoding; each stored half a second after its time."""
    from tenant_events.simulator.activity import Activity
    from tenant_events.simulator.config import SimulatorConfig
    from tenant_events.simulator.event_log import EventLog
    from tenant_events.simulator.storage import SimStore
    from tenant_events.store.records import EventRow, summary_of
    from tenant_events.wire.messages import decode_frame_timed

    config = SimulatorConfig(seed=seed, retention=20_000)
    log = EventLog(config, SimStore(None))
    activity = Activity(config, log)
    rng = random.Random(seed)
    spacing, ts, seq = seconds / n, start, first_seq
    made = 0
    while made < n:
        k = min(10_000, n - made)
        for _ in range(k):
            ts += rng.expovariate(1 / spacing)
            name, data = activity.life.next_event(min(ts, start + seconds - 0.001))
            log.append(name, data, min(ts, start + seconds - 0.001), purpose=activity._purpose())
        log.flush()
        for frame in log.frames[-k:]:
            head, body = frame.split(b"\ndata: ", 1)
            text = body.rstrip(b"\n").decode()
            message, time_text = decode_frame_timed(head.split(b"\n", 1)[0][7:].decode(), text)
            row = EventRow.from_message(message, text, 0.0, time_text)  # type: ignore[arg-type]
            yield (
                seq,
                row.event_id,
                row.offset,
                row.type,
                row.time,
                row.time_ms,
                row.source,
                row.tenant,
                row.purpose,
                summary_of(row.type, row.raw),
                row.raw,
                row.time_ms / 1000 + 0.5,
            )
            seq += 1
        made += k


def build_month(job: tuple[Path, str, int, int, int, float, float]) -> dict[str, Any]:
    """One month's archive file, in a worker process, written as the store writes a month given in chunks
    (archive_build.write_chunks: each chunk of CHUNK events made only when the one before is written, one
    file in the end, no merge); generation timed apart, in seconds and CPU, and taken out of the writer's."""
    import resource

    from tenant_events.store.archive_build import write_chunks

    folder, month, seed, first_seq, n, start, seconds = job
    timed = {"gen_s": 0.0, "gen_cpu": 0.0}
    rows = rows_of_month(seed, first_seq, n, start, seconds)

    def chunks() -> Iterator[list[tuple[Any, ...]]]:
        while True:
            t0, c0 = time.perf_counter(), time.process_time()
            chunk = [r for _, r in zip(range(CHUNK), rows, strict=False)]
            timed["gen_s"] += time.perf_counter() - t0
            timed["gen_cpu"] += time.process_time() - c0
            if not chunk:
                return
            yield chunk

    t0, c0 = time.perf_counter(), time.process_time()
    whole = write_chunks(folder, month, chunks())  # type: ignore[arg-type]
    write_s = time.perf_counter() - t0 - timed["gen_s"]
    cpu_s = time.process_time() - c0 - timed["gen_cpu"]
    f = whole.file
    return {
        "month": month,
        "events": n,
        "gen_s": timed["gen_s"],
        "write_s": write_s,
        "merge_s": 0.0,
        "cpu_s": cpu_s,
        "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "file": [f.name, f.month, f.first_seq, f.last_seq, f.first_ms, f.last_ms, f.rows, f.bytes],
    }


def build(base: Path, events: int, days: float, live_days: float) -> dict[str, Any]:
    """The archive files and the catalog of a database whose live tier is the last `live_days`."""
    from tenant_events.store import Batch, StoreWriter
    from tenant_events.store.archive_catalog import ArchiveFile, add_files
    from tenant_events.store.archive_layout import folder_of
    from tenant_events.store.records import EventRow

    db = base / "tenants" / "year.sqlite3"
    done = base / "build.json"
    if done.exists():
        return dict(json.loads(done.read_text()))
    db.parent.mkdir(parents=True, exist_ok=True)
    folder = folder_of(db)
    end = time.time()
    start = end - days * DAY
    per_second = events / (days * DAY)
    archive_end = end - live_days * DAY
    jobs, seq, at, month_no = [], 1, start, 0
    while at < archive_end:
        moment = datetime.fromtimestamp(at, UTC)
        month_end = (moment.replace(day=1) + timedelta(days=32)).replace(
            day=1, hour=0, minute=0, second=0, microsecond=0
        )
        stop = min(month_end.timestamp(), archive_end)
        n = max(1, round((stop - at) * per_second))
        jobs.append((folder, moment.strftime("%Y-%m"), 1000 + month_no, seq, n, at, stop - at))
        seq, at, month_no = seq + n, stop, month_no + 1
    wall = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        months = list(pool.imap_unordered(build_month, jobs))
    wall = time.perf_counter() - wall
    months.sort(key=lambda m: m["file"][2])
    writer = StoreWriter(db)
    try:
        live_n = round(live_days * DAY * per_second)
        t0 = time.perf_counter()
        rows = rows_of_month(9999, seq, live_n, archive_end, end - archive_end - 1)
        upto = seq - 1

        def catalog(conn: Any) -> None:
            conn.execute("BEGIN IMMEDIATE")
            add_files(conn, [ArchiveFile(*m["file"]) for m in months], upto)
            conn.execute("UPDATE sqlite_sequence SET seq = ? WHERE name = 'events'", (upto,))
            conn.execute("INSERT OR IGNORE INTO sqlite_sequence (name, seq) VALUES ('events', ?)", (upto,))
            conn.execute(
                "UPDATE counters SET value = ? WHERE name IN ('fts_upto', 'directory_upto')", (upto,)
            )
            # The access history would have been kept as the year's events arrived; it is not what this
            # bench measures, and walking the archived year for it would run beside every read below.
            conn.execute(
                "INSERT INTO counters (name, value) VALUES ('access_upto', ?)"
                " ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                (upto,),
            )
            conn.execute("COMMIT")

        writer.run_archive_job(catalog).result()
        batch: list[EventRow] = []
        for r in rows:
            batch.append(
                EventRow(
                    r[1], r[2], r[3], r[3].split(".")[0], r[4], r[5], r[6], r[7], r[8], None, r[10], r[11]
                )
            )
            if len(batch) == 1000:
                writer.commit_sync(Batch(events=batch))
                batch = []
        if batch:
            writer.commit_sync(Batch(events=batch))
        writer.index_all_sync()
        live_s = time.perf_counter() - t0
    finally:
        writer.close()
    result = {
        "events": events,
        "archived": upto,
        "live": live_n,
        "months": months,
        "wall_s": wall,
        "live_s": live_s,
        "archive_bytes": sum(p.stat().st_size for p in folder.iterdir() if p.is_file()),
        "live_bytes": sum(p.stat().st_size for p in db.parent.glob("year.sqlite3*")),
    }
    done.write_text(json.dumps(result))
    return result


def timed(fn: Any, runs: int) -> tuple[float, list[float], Any]:
    times, out = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), times, out


def reads(db: Path, runs: int) -> dict[str, Any]:
    from tenant_events.store.entity_reader import DirectoryReader
    from tenant_events.store.reader import EventReader
    from tenant_events.values.events import EventFilter

    out: dict[str, Any] = {}
    with EventReader(db) as reader:
        sample = reader.page_before(
            EventFilter(types=frozenset({"user.created"})), reader.archived_upto() // 3, 1
        )[0]
        obj = json.loads(reader.get(sample.seq).raw or "{}")["event"]["data"]["object"]  # type: ignore[union-attr]
        newest = datetime.fromisoformat(
            reader.page_before(EventFilter(), None, 1)[0].time.replace("Z", "+00:00")
        )
        filters = {
            "everything": EventFilter(),
            "one type": EventFilter(types=frozenset({"user.deleted"})),
            "last hour": EventFilter(since=newest - timedelta(hours=1)),
            "no test events": EventFilter(include_test=False),
            "query: type:organization.*": EventFilter(query="type:organization.*"),
            "query: -type:user.updated": EventFilter(query="-type:user.updated"),
            "query: user:ada": EventFilter(query="user:ada"),
            f"query: email:{obj['email']}": EventFilter(query=f"email:{obj['email']}"),
            "query: org:acme OR org:globex": EventFilter(query="org:acme OR org:globex"),
            'query: "ada lovelace" type:user.*': EventFilter(query='"ada lovelace" type:user.*'),
            "query: role:admin -type:group.*": EventFilter(query="role:admin -type:group.*"),
            "query: ip:203.0.113.7": EventFilter(query="ip:203.0.113.7"),
            "text: event id": EventFilter(text=sample.event_id),
            "text: common word (example)": EventFilter(text="example"),
            "text: a name (lovelace)": EventFilter(text="lovelace"),
        }
        for name, f in filters.items():
            first = timed(lambda f=f: reader.page_before(f, None, 256), runs)
            count = timed(lambda f=f: reader.count(f), runs)
            hist = timed(lambda f=f: reader.histogram(f, 86400), runs)
            out[name] = {
                "first_screen_ms": first[:2],
                "count_ms": count[:2],
                "histogram_ms": hist[:2],
                "matches": count[2],
            }
            print(
                f"  {name:42} first {first[0]:7.0f} ms  count {count[0]:7.0f} ms  histogram {hist[0]:7.0f} ms"
                f"  ({count[2]:,} matches)  runs {[round(t) for t in first[1]]} {[round(t) for t in count[1]]}"
                f" {[round(t) for t in hist[1]]}",
                flush=True,
            )
        directory = DirectoryReader.over(reader)
        user = obj["user_id"]
        line = timed(lambda: directory.timeline("user", user, None, 200), runs)
        out["timeline_ms"] = line[:2]
        print(
            f"  timeline of {user}: {line[0]:.0f} ms ({len(line[2])} events) runs {[round(t) for t in line[1]]}"
        )
    return out


def window_hold(
    db: Path,
    runs: int,
    shot: Path | None,
    seconds: float = 20.0,
    why: bool = False,
    watch: float = 0.0,
) -> dict[str, Any]:
    """Open the tenant in the real window `runs` times; each time the longest late tick of a 5 ms timer from
    adding the tenant until its counts, histogram and page keys are shown, and a second after. Its peer, in
    the same run: the longest late tick over as long a time with the window open and no tenant (what the
    machine's load alone does to the timer). `shot`: a picture of the window once loaded. `why`: each stretch
    over 50 ms, when it began and what the UI thread ran then (hold_sampler.py). `watch`: seconds from adding the
    tenant that the ticks are watched at least (the later aggregates passes, names said again).

    Each tick notes the UI thread's CPU time too: beside the longest hold, the CPU the thread spent in it and the
    most CPU any one stretch took (what the window's own work costs, whatever the machine's load adds by making
    the thread wait for a core)."""
    import asyncio

    import qasync
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from hold_sampler import HoldSampler, events_within, timed_app_class
    from tenant_events.store.reader import EventReader
    from tenant_events.ui.window.main_window import MainWindow
    from tenant_events.view.tenant_reader import TenantReader

    app = QApplication.instance() or (timed_app_class() if why else QApplication)(sys.argv[:1])
    each: list[dict[str, Any]] = []

    async def go() -> None:
        window = MainWindow(str(db.parent / "window.ini"))
        window.resize(1280, 800)
        window.show()
        ticks: list[float] = []
        cpu: list[float] = []  # the UI thread's CPU time at each tick

        def tick() -> None:
            ticks.append(time.perf_counter())
            cpu.append(time.thread_time())

        timer = QTimer()
        timer.setInterval(5)
        timer.timeout.connect(tick)
        timer.start()
        await asyncio.sleep(0.5)
        idle_from = len(ticks) - 1
        await asyncio.sleep(2.5)
        idle = [b - a for a, b in itertools.pairwise(ticks[idle_from:])]
        loaded = asyncio.get_running_loop().create_future()
        window.aggregates_updated.connect(lambda: loaded.done() or loaded.set_result(True))
        # made before the tenant is added, as the app makes them before its window shows (they load DuckDB)
        t0 = time.perf_counter()
        readers = [TenantReader(EventReader(db)) for _ in range(3)]
        readers_ms = (time.perf_counter() - t0) * 1000
        await asyncio.sleep(0.5)
        first = len(ticks) - 1
        sampler = HoldSampler() if why else contextlib.nullcontext()
        with sampler:
            t0 = time.perf_counter()
            window.add_tenant("year", *readers)
            add_ms = (time.perf_counter() - t0) * 1000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(loaded, seconds * 6)
            loaded_s = time.perf_counter() - t0
            await asyncio.sleep(max(1.0, watch - loaded_s))
            timer.stop()
        gaps = [b - a for a, b in itertools.pairwise(ticks[first:])]
        spent = [b - a for a, b in itertools.pairwise(cpu[first:])]
        longest = max(range(len(gaps)), key=gaps.__getitem__) if gaps else None
        if isinstance(sampler, HoldSampler):
            for a, b in itertools.pairwise(ticks[first:]):
                if b - a > 0.05:
                    print(
                        f"    held {(b - a) * 1000:.0f} ms at +{(a - t0) * 1000:.0f} ms: {sampler.explain(a, b)}"
                    )
                    print(f"      events: {events_within(QApplication.instance(), a, b)}")
        if shot is not None and not each:
            window.grab().save(str(shot))
        each.append(
            {
                "readers_made_ms": round(readers_ms),
                "add_tenant_ms": round(add_ms),
                "longest_hold_ms": round(max(gaps) * 1000 if gaps else 0),
                "its_cpu_ms": round(spent[longest] * 1000) if longest is not None else 0,
                "most_cpu_in_a_hold_ms": round(max(spent) * 1000 if spent else 0),
                "idle_longest_late_ms": round(max(idle) * 1000 if idle else 0),
                "aggregates_loaded_s": round(loaded_s, 2),
                "rows": window.model.rowCount(),
            }
        )
        await window.shutdown()
        window.close()
        for r in readers:
            r.reader.close()

    with asyncio.Runner(loop_factory=qasync.QEventLoop) as runner:
        for _ in range(runs):
            runner.run(go())
    del app
    return {
        "longest_hold_ms": statistics.median(r["longest_hold_ms"] for r in each),
        "most_cpu_in_a_hold_ms": statistics.median(r["most_cpu_in_a_hold_ms"] for r in each),
        "idle_longest_late_ms": statistics.median(r["idle_longest_late_ms"] for r in each),
        "aggregates_loaded_s": statistics.median(r["aggregates_loaded_s"] for r in each),
        "runs": each,
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=30_000_000)
    parser.add_argument("--days", type=float, default=365)
    parser.add_argument("--live-days", type=float, default=2)
    parser.add_argument("--dir", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-window", action="store_true")
    parser.add_argument("--no-reads", action="store_true", help="only the build and the window")
    parser.add_argument(
        "--watch", type=float, default=0.0, help="watch the ticks this many seconds after opening, at least"
    )
    parser.add_argument("--why", action="store_true", help="name what ran in each stretch over 50 ms")
    parser.add_argument("--screenshot", type=Path, help="a PNG of the window over the year, once loaded")
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    built = build(args.dir, args.events, args.days, args.live_days)
    write_s = sum(m["write_s"] + m["merge_s"] for m in built["months"])
    gen_s = sum(m["gen_s"] for m in built["months"])
    cpu_s = sum(m.get("cpu_s", 0.0) for m in built["months"])
    archived = built["archived"]
    print(
        f"built {built['events']:,} events: {archived:,} archived in {len(built['months'])} monthly files,"
        f" {built['live']:,} live"
    )
    print(
        f"  archive writer: {archived / write_s:,.0f} events/s per core ({write_s:,.0f} s of writing and"
        f" merging over both workers); both workers, generation included: {archived / built['wall_s']:,.0f}"
        f" events/s ({built['wall_s']:,.0f} s wall); generation alone {archived / gen_s:,.0f} events/s per core"
    )
    if cpu_s:
        print(
            f"  archive writer's CPU time (this process and its DuckDB threads; less swayed by other jobs than"
            f" the seconds above): {archived / cpu_s:,.0f} events per CPU second ({cpu_s:,.0f} s)"
        )
    for m in built["months"]:
        print(
            f"    {m['month']}: {m['events']:,} events, write {m['write_s']:.0f} s + merge {m['merge_s']:.0f} s"
            f" ({m.get('cpu_s', 0.0):.0f} s of CPU, {m.get('max_rss_mb', 0.0):,.0f} MB at most),"
            f" {m['file'][7] / m['events']:.0f} B/event"
        )
    print(
        f"  archive: {built['archive_bytes'] / 2**20:,.0f} MiB, {built['archive_bytes'] / archived:.0f} B/event"
    )
    print(
        f"  live tier ({args.live_days:g} days, {built['live']:,} events): {built['live_bytes'] / 2**20:,.0f} MiB,"
        f" {built['live_bytes'] / max(1, built['live']):.0f} B/event; stored and indexed in {built['live_s']:.0f} s"
    )
    db = args.dir / "tenants" / "year.sqlite3"
    results: dict[str, Any] = {"build": built, "reads": {} if args.no_reads else reads(db, args.runs)}
    if not args.no_window:
        results["window"] = window_hold(db, args.runs, args.screenshot, why=args.why, watch=args.watch)
        print(f"  window: {results['window']}")
    (args.dir / f"results-{int(time.time())}.json").write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
