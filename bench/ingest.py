"""Durable ingest rate of the stream engine vs the vendor SDK and vs the floor.

One simulator subprocess (`--real-names`, so the vendor SDK's models accept the events; our wire models take
both prefixes) serves a backlog; each consumer runs in its OWN subprocess (clean RSS, no shared GIL with the
simulator) and replays the backlog from `from_timestamp` far in the past:

  engine   StreamEngine + StoreWriter: httpx + stream/sse_decoder.py, wire-model validation, batches + cursor
           committed to SQLite, with the entity directory kept in the same transactions (live-sized batches)
  rules    engine + the alert rules with default settings (the whole built-in pack), evaluated over the
           committed rows on the writer thread (alerts/runner.py); timed until every stored event is evaluated.
           Its cost is reported as 1 − rules/engine of the median rates (goal ≤ 10 %); with it in --only, the
           catch-up is timed with the rules as well
  rules-off    the same with every rule switched off: what evaluating costs with nothing to evaluate
  rules-floor  the same with one rule in place of the pack that reads the payload of every event the pack reads
           (of the pack's types with a payload condition) and never fires: the least a rule over the payload
           costs, decoding the event's JSON once. With `rules`, these tell the pack's own cost from the floor
           any payload rule on this machine pays, and from the run-to-run spread of a pack that does nothing
  nodir    the same engine with the store's entity directory switched off: what the directory costs
           (`--only engine nodir` for just that comparison; goal engine ≥ 90 % of nodir)
  stream   the real `tenant-events stream` command with the built-in pack (the default), from its start, into a
           fresh data dir (bench/stream_consumer.py): the rate until --events are stored; the rules follow the
           store, so the time until they have evaluated those events is printed beside it
  stream-noalerts  the same command with --no-alerts. Each run prints stream / stream-noalerts of that run (the
           pack's cost to storing; goal ≥ 90 %), and the medians stream over peer (goal ≥ 5×); with `stream` in
           --only, the catch-up is timed with the command: until its last event is stored (goal < 20 s for 1M) and
           until the rules have raised the last alert of the backlog (goal < 30 s)
  peer     auth0-python `Auth0(base_url, token).events.subscribe(...)`: typed messages, stores nothing
  floor    httpx bytes → hand-split SSE → orjson.loads → SQLite executemany, 1,000 rows a transaction
  baseline (with --baseline DIR) the engine consumer again, importing `tenant_events` from another checkout
           (e.g. main, before a change): before/after in the same run, on the same simulator
  stream-baseline  (with --baseline DIR and `stream` in --only) the `stream` command with the pack again, importing
           `tenant_events` from that checkout: its catch-up's two times beside this checkout's, in the same run

The engine rows also give the largest write-ahead log seen during the run (sampled every 5 ms by a process of
its own, off the consumer's GIL).
Rates are medians over --runs (consumer order rotated each run, all in the same run of this script). Then
--catchup-runs catch-ups of --catchup events (1M by default) by the engine (and by the rules, the command and the
baseline when they are in --only) report their time and peak RSS, each with the load average at its end, and
their median.

    .venv/bin/python bench/ingest.py --events 200000 --runs 3 --catchup 1000000
    git worktree add /tmp/main main && .venv/bin/python bench/ingest.py --only engine --baseline /tmp/main
    .venv/bin/python bench/ingest.py --events 100000 --runs 3 --only engine floor --baseline /tmp/main \\
        --catchup 1000000 --catchup-runs 3
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import select
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import orjson

import sim_process
from stream_consumer import consume_stream

OLD = "2000-01-01T00:00:00Z"
EVAL_CPU = [0.0]  # seconds of CPU the rules' evaluation took in this child (consumer "rules")
RUN_CPU = [0.0]  # seconds of CPU this child used while timed (engine and rules; start-up left out)
EVENT_KINDS = ("offset-only", "error")


WAL_MAX: dict[str, float] = {}  # the engine consumers' largest -wal file, MiB (sampled)


def sample_wal(wal: Path) -> None:
    """The WAL sampler's own process (`--sample-wal`): the size every 5 ms until its stdin closes, then the
    largest. A sampling thread in the consumer took the consumer's GIL 200 times a second: it slowed the
    GIL-bound consumers it measured (a 1M catch-up with rules took 1-2 s longer with it)."""
    largest = 0
    while not select.select([sys.stdin], [], [], 0.005)[0]:
        with contextlib.suppress(OSError):  # not there yet, or just emptied
            largest = max(largest, wal.stat().st_size)
    print(largest / 2**20, flush=True)


def start_wal_sampler(wal: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, __file__, "--sample-wal", str(wal)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def stop_wal_sampler(sampler: subprocess.Popen[str]) -> None:
    out, _ = sampler.communicate("", timeout=30)
    WAL_MAX["wal_max_mib"] = float(out.strip())


# -- consumers (each runs in a child process) ----------------------------------------------------------------
def _floor_settings(pack: str) -> Any:
    """Alert settings of the floor consumers: every built-in rule off, and for "floor" one rule of the pack's
    payload types whose condition reads each event and never holds."""
    from tenant_events.alert_settings import AlertSettings
    from tenant_events.alerts.builtin_rules import BUILTIN_RULES
    from tenant_events.alerts.from_settings import build_evaluator

    off: list[dict[str, Any]] = [{"id": rule.id, "enabled": False} for rule in BUILTIN_RULES]
    if pack == "floor":
        types = sorted(build_evaluator(AlertSettings(), "bench").engine.raw_types)
        off.append(
            {
                "id": "payload-floor",
                "name": "Reads every payload",
                "types": types,
                "conditions": [{"field": "object.id", "op": "equals", "value": "never-an-id"}],
            }
        )
    return AlertSettings(rules=off)


def consume_engine(
    auth_url: str, token: str, n: int, rules: bool = False, *, keep_directory: bool = True, pack: str = "all"
) -> float:
    from tenant_events.store import StoreWriter
    from tenant_events.stream.engine import EngineConfig, StreamEngine
    from tenant_events.stream.tokens import StaticTokenProvider

    async def go() -> float:
        tmp = Path(tempfile.mkdtemp(prefix="bench-ingest-"))
        if not keep_directory:  # (imported only here: a --baseline checkout may have no directory)
            from tenant_events.store import directory

            directory.ENABLED = False
        writer = StoreWriter(tmp / "bench.sqlite3")
        sampler = start_wal_sampler(tmp / "bench.sqlite3-wal")
        engine = StreamEngine(
            EngineConfig(auth_url + "/api/v2", from_timestamp=OLD, name="bench"),
            StaticTokenProvider(token),
            writer,
        )
        runner = None
        if rules:  # (imported only here: a --baseline checkout may have no alert rules)
            from tenant_events.alert_settings import AlertSettings
            from tenant_events.alerts.from_settings import build_evaluator
            from tenant_events.alerts.runner import AlertRunner

            settings = AlertSettings() if pack == "all" else _floor_settings(pack)
            runner = AlertRunner(build_evaluator(settings, "bench"), lambda: writer)
        raised: list[int] = []
        if runner is not None:
            step = runner.evaluator.step

            def timed_step(ledger: Any) -> Any:  # CPU time of the writer thread spent evaluating
                before = time.thread_time()
                try:
                    return step(ledger)
                finally:
                    EVAL_CPU[0] += time.thread_time() - before

            runner.evaluator.step = timed_step  # type: ignore[method-assign]
            engine.on_commit.append(runner.kick)
            runner.on_alerts.append(lambda result: raised.append(len(result.raised)))
        done = asyncio.Event()
        engine.on_commit.append(lambda _r: done.set() if engine.stats.events_stored >= n else None)
        started, cpu_before = time.perf_counter(), time.process_time()
        task = asyncio.create_task(engine.run())
        await done.wait()
        if runner is not None:
            await runner.drain()  # and every stored event evaluated, its alerts committed
            assert runner.failures == 0 and runner.evaluator.watermark, runner.failures
            print(f"rules raised {sum(raised)} alerts", file=sys.stderr)
        elapsed = time.perf_counter() - started  # every event and its cursor committed (durable)
        RUN_CPU[0] = time.process_time() - cpu_before
        engine.stop()
        await task
        if INDEXING:  # the writer's idle-time indexer: full-text index, and the directory when it is kept
            INDEXED["seconds"] = await asyncio.to_thread(wait_indexed, tmp / "bench.sqlite3", keep_directory)
        writer.close()
        stop_wal_sampler(sampler)
        assert engine.stats.events_stored >= n and engine.stats.rejected == 0, engine.stats
        shutil.rmtree(tmp)
        return elapsed

    return asyncio.run(go())


INDEXING = False  # --indexing: after each engine run, also time the idle indexer catching up
INDEXED: dict[str, float] = {}


def wait_indexed(db: Path, directory: bool) -> float:
    """Seconds until the full-text index (and the directory) cover every stored event."""
    started = time.perf_counter()
    conn = sqlite3.connect(db)
    try:
        while True:
            fts, kept, top = conn.execute(
                "SELECT (SELECT value FROM counters WHERE name = 'fts_upto'),"
                " (SELECT value FROM counters WHERE name = 'directory_upto'), (SELECT max(seq) FROM events)"
            ).fetchone()
            if fts >= top and (kept >= top or not directory):
                return time.perf_counter() - started
            time.sleep(0.05)
    finally:
        conn.close()


def consume_peer(auth_url: str, token: str, n: int) -> float:
    from auth0.management.client import Auth0

    client = Auth0(base_url=auth_url + "/api/v2", token=token, timeout=60)
    started = time.perf_counter()
    seen = 0
    for message in client.events.subscribe(from_timestamp=OLD):
        if getattr(message, "type", None) not in EVENT_KINDS:
            seen += 1
            if seen >= n:
                break
    elapsed = time.perf_counter() - started
    if seen < n:
        raise SystemExit(f"the SDK yielded only {seen} of {n} events")
    return elapsed


def consume_floor(auth_url: str, token: str, n: int) -> float:
    tmp = Path(tempfile.mkdtemp(prefix="bench-floor-"))
    db = sqlite3.connect(tmp / "floor.sqlite3", isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    db.execute("CREATE TABLE e (id TEXT PRIMARY KEY, off TEXT, type TEXT, raw TEXT)")
    rows: list[tuple[str, str, str, str]] = []
    seen = 0
    started = time.perf_counter()
    headers = {"Authorization": f"Bearer {token}", "Accept": "text/event-stream"}
    with httpx.stream(
        "GET",
        auth_url + "/api/v2/events",
        params={"from_timestamp": OLD},
        headers=headers,
        timeout=httpx.Timeout(30, read=None),
    ) as response:
        buffer = b""
        for chunk in response.iter_bytes():
            buffer += chunk
            *blocks, buffer = buffer.split(b"\n\n")
            for block in blocks:
                kind, data = "", b""
                for line in block.split(b"\n"):
                    if line.startswith(b"event:"):
                        kind = line[6:].strip().decode()
                    elif line.startswith(b"data:"):
                        data = line[5:].strip()
                if not data or kind in EVENT_KINDS:
                    continue
                message = orjson.loads(data)
                rows.append((message["event"]["id"], message["offset"], kind, data.decode()))
                if len(rows) >= 1000 or seen + len(rows) >= n:
                    db.execute("BEGIN")
                    db.executemany("INSERT OR IGNORE INTO e VALUES (?, ?, ?, ?)", rows)
                    db.execute("COMMIT")
                    seen += len(rows)
                    rows.clear()
            if seen >= n:
                break
    elapsed = time.perf_counter() - started
    db.close()
    shutil.rmtree(tmp)
    return elapsed


def consume_rules(auth_url: str, token: str, n: int) -> float:
    return consume_engine(auth_url, token, n, rules=True)


def consume_rules_off(auth_url: str, token: str, n: int) -> float:
    return consume_engine(auth_url, token, n, rules=True, pack="off")


def consume_rules_floor(auth_url: str, token: str, n: int) -> float:
    return consume_engine(auth_url, token, n, rules=True, pack="floor")


def consume_engine_without_directory(auth_url: str, token: str, n: int) -> float:
    return consume_engine(auth_url, token, n, keep_directory=False)


CONSUMERS = {
    "engine": consume_engine,
    "rules": consume_rules,
    "rules-off": consume_rules_off,
    "rules-floor": consume_rules_floor,
    "nodir": consume_engine_without_directory,
    "stream": consume_stream,
    "stream-noalerts": consume_stream,
    "peer": consume_peer,
    "floor": consume_floor,
    "baseline": consume_engine,
    "stream-baseline": consume_stream,
}


def child(kind: str, auth_url: str, n: int, indexing: bool) -> None:
    global INDEXING
    INDEXING = indexing
    token = sim_process.admin_token(auth_url)
    if kind.startswith(
        "stream"
    ):  # the command in a process of its own: its figures are measured from outside
        print(json.dumps(consume_stream(auth_url, token, n, alerts=kind != "stream-noalerts")))
        return
    elapsed = CONSUMERS[kind](auth_url, token, n)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    peak_mb = usage.ru_maxrss / 1024  # Linux: KiB
    # CPU seconds of the whole child (start-up included): less swayed than the rate by other work on the machine
    cpu = usage.ru_utime + usage.ru_stime
    print(
        json.dumps(
            {
                "seconds": elapsed,
                "events": n,
                "peak_rss_mb": peak_mb,
                "cpu_s": cpu,
                "eval_cpu_s": EVAL_CPU[0],
                "run_cpu_s": RUN_CPU[0],
                "index_seconds": INDEXED.get("seconds"),
                **WAL_MAX,
            }
        )
    )


def run_child(
    kind: str, auth_url: str, n: int, baseline: Path | None = None, indexing: bool = False
) -> dict[str, float]:
    # The previous consumer's database (hundreds of MB of dirty pages) is written back now, not during this run.
    os.sync()
    env = dict(os.environ)
    if kind in ("baseline", "stream-baseline"):
        assert baseline is not None, "--baseline DIR"
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(baseline / "desktop"), env.get("PYTHONPATH")]))
    out = subprocess.run(
        [
            sys.executable,
            __file__,
            "--child",
            kind,
            "--auth-url",
            auth_url,
            "--events",
            str(n),
            *(["--indexing"] if indexing else []),
        ],
        capture_output=True,
        text=True,
        timeout=3600,
        env=env,
    )
    if out.returncode != 0:
        raise SystemExit(f"{kind} failed:\n{out.stderr[-3000:]}")
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=200_000, help="events per rate run")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument(
        "--catchup", type=int, default=1_000_000, help="events for the catch-up figure (0 = skip)"
    )
    ap.add_argument(
        "--catchup-runs",
        type=int,
        default=1,
        help="catch-ups of each consumer (their median when more than one)",
    )
    ap.add_argument("--only", nargs="*", default=["engine", "peer", "floor"], choices=list(CONSUMERS))
    ap.add_argument(
        "--baseline",
        type=Path,
        metavar="DIR",
        help="also run the engine from this checkout (its desktop/ first on PYTHONPATH) as 'baseline'",
    )
    ap.add_argument(
        "--indexing",
        action="store_true",
        help="engine and nodir: also time the idle indexer (full-text, directory) after the catch-up",
    )
    ap.add_argument("--child", choices=list(CONSUMERS), help=argparse.SUPPRESS)
    ap.add_argument("--sample-wal", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--auth-url", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.baseline is not None:
        if not (args.baseline / "desktop" / "tenant_events").is_dir():
            ap.error(
                f"--baseline {args.baseline}: no desktop/tenant_events there; give a checkout of this project"
            )
        args.only = [*args.only, "baseline"] if "baseline" not in args.only else args.only
        if "stream" in args.only and "stream-baseline" not in args.only:
            args.only.append("stream-baseline")
    if args.sample_wal:
        sample_wal(args.sample_wal)
        return 0
    if args.child:
        child(args.child, args.auth_url, args.events, args.indexing)
        return 0
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average at start: {load} (2 cores; other work on the machine skews every rate)")
    sim, auth_url = sim_process.start_simulator(
        max(args.events, args.catchup), "--real-names", "--burst-every", "0", "--heartbeat", "1"
    )
    try:
        rates: dict[str, list[float]] = {k: [] for k in args.only}
        indexing: dict[str, list[float]] = {k: [] for k in args.only}
        pack_ratios: list[float] = []  # stream / stream-noalerts, each of one run
        floor_ratios: list[float] = []  # engine / floor, each of one run
        for run in range(args.runs):
            order = args.only[run % len(args.only) :] + args.only[: run % len(args.only)]
            for kind in order:
                sim_before = sim_process.process_cpu(sim.pid)
                r = run_child(kind, auth_url, args.events, args.baseline, args.indexing)
                sim_cpu = sim_process.process_cpu(sim.pid) - sim_before
                rates[kind].append(r["events"] / r["seconds"])
                wal = f"  WAL max {r['wal_max_mib']:.1f} MiB" if "wal_max_mib" in r else ""
                if kind.startswith("stream"):  # the command's whole process: no figures from inside it
                    evaluated = (
                        f", rules through them at {r['alerts_seconds']:.1f} s"
                        if kind != "stream-noalerts"
                        else ""
                    )
                    print(
                        f"run {run + 1} {kind:15s} {rates[kind][-1]:>10,.0f} events/s  (stored in "
                        f"{r['seconds']:.1f} s from its start{evaluated}; CPU {r['cpu_s']:.1f} s, by then "
                        f"{r['command_cpu_s']:.1f} s in the command + {r['children_cpu_s']:.1f} s in its rules' "
                        f"process; simulator "
                        f"{sim_cpu:.1f} s)  peak RSS {r['peak_rss_mb']:.0f} MB{wal}",
                        flush=True,
                    )
                    continue
                evaluating = f"  evaluating {r['eval_cpu_s']:.2f} s CPU ({r['eval_cpu_s'] / r['seconds']:.1%} of the run)"
                after = ""
                if r.get("index_seconds") is not None:
                    indexing[kind].append(r["index_seconds"])
                    after = f"  then indexed in {r['index_seconds']:.1f} s"
                print(
                    f"run {run + 1} {kind:11s} {rates[kind][-1]:>10,.0f} events/s  CPU {r['cpu_s']:.1f} s  "
                    f"(timed {r['run_cpu_s']:.1f} s in {r['seconds']:.1f} s; simulator {sim_cpu:.1f} s)  "
                    f"peak RSS {r['peak_rss_mb']:.0f} MB{wal}{evaluating if kind.startswith('rules') else ''}{after}",
                    flush=True,
                )
            if "engine" in rates:
                same_run = [
                    f"{k} {v[-1] / rates['engine'][-1]:.2f}"
                    for k, v in rates.items()
                    if k.startswith("rules")
                ]
                if same_run:
                    print(f"run {run + 1} over the engine's rate in this run: {', '.join(same_run)}")
            if "stream" in rates and "stream-noalerts" in rates:
                ratio = rates["stream"][-1] / rates["stream-noalerts"][-1]
                print(f"run {run + 1} pack on / pack off (stream / stream-noalerts) in this run: {ratio:.0%}")
                pack_ratios.append(ratio)
            if "engine" in rates and "floor" in rates:
                floor_ratios.append(rates["engine"][-1] / rates["floor"][-1])
                print(f"run {run + 1} engine / floor in this run: {floor_ratios[-1]:.2f}")
        med = {k: statistics.median(v) for k, v in rates.items() if v}  # (--runs 0: the catch-up alone)
        print(
            f"\nmedians over {args.runs} runs of {args.events:,} events (2 cores, simulator in its own process):"
        )
        print("| consumer | events/s (median) | vs engine |")
        print("|---|---:|---:|")
        for k, v in med.items():
            versus = f"engine is {med['engine'] / v:.2f}×" if "engine" in med and v else "—"
            print(f"| {k} | {v:,.0f} | {versus} |")
        if "engine" in med and "peer" in med:
            print(f"engine / peer = {med['engine'] / med['peer']:.2f} (goal ≥ 3)")
        if "engine" in med and "nodir" in med:
            print(f"engine (with the directory) / nodir = {med['engine'] / med['nodir']:.0%} (goal ≥ 90 %)")
        for kind, seconds in indexing.items():
            if seconds:
                what = "full-text index and directory" if kind == "engine" else "full-text index"
                print(
                    f"{kind}: {what} complete {statistics.median(seconds):.1f} s (median) after the catch-up"
                )
        if floor_ratios:
            print(
                f"engine / floor: median of the runs' ratios {statistics.median(floor_ratios):.2f} "
                f"(goal ≥ 1.0); each run: {', '.join(f'{r:.2f}' for r in floor_ratios)}"
            )
        if pack_ratios:
            print(
                f"pack on / pack off (stream / stream-noalerts): median of the runs' ratios "
                f"{statistics.median(pack_ratios):.0%} (goal ≥ 90 %); each run: "
                f"{', '.join(f'{r:.0%}' for r in pack_ratios)}"
            )
        for kind in ("stream", "stream-noalerts"):
            if kind in med and "peer" in med:
                print(f"{kind} / peer = {med[kind] / med['peer']:.2f}× (goal ≥ 5×)")
        if "engine" in med and "rules" in med:
            print(
                f"alert rule evaluation costs {1 - med['rules'] / med['engine']:.1%} of ingest (goal ≤ 10 %)"
            )
        if "engine" in med and "baseline" in med:
            print(f"engine / baseline ({args.baseline}) = {med['engine'] / med['baseline']:.2f}")
        if args.catchup:
            kinds = [
                "engine",
                *(k for k in ("rules", "stream", "baseline", "stream-baseline") if k in args.only),
            ]
            catchups: dict[str, list[float]] = {k: [] for k in kinds}
            for round_ in range(args.catchup_runs):
                # The order turns each round, as the rate runs' does: no consumer always first on a cold cache
                for kind in kinds[round_ % len(kinds) :] + kinds[: round_ % len(kinds)]:
                    catchup_once(kind, auth_url, args, catchups[kind])
            if "stream-baseline" in catchups:
                for ours, theirs in zip(LAST_ALERT["stream"], LAST_ALERT["stream-baseline"], strict=False):
                    print(
                        f"catch-up's last alert: stream {ours:.1f} s, stream-baseline {theirs:.1f} s "
                        f"({'no later' if ours <= theirs else 'LATER'} than the baseline, in the same round)"
                    )
            for kind, seconds in catchups.items():
                if len(seconds) > 1:
                    print(
                        f"catch-up of {args.catchup:,} events ({kind}): median {statistics.median(seconds):.1f} s "
                        f"over {len(seconds)} runs; each run: {', '.join(f'{s:.1f}' for s in seconds)} s"
                    )
        print("load average at end:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    finally:
        sim.terminate()
        sim.wait(timeout=30)
    return 0


LAST_ALERT: dict[
    str, list[float]
] = {}  # the catch-ups' last alert, seconds from the command's start, by kind


def catchup_once(kind: str, auth_url: str, args: argparse.Namespace, seconds: list[float]) -> None:
    """One catch-up of --catchup events by `kind`, printed with the machine's load average at its end."""
    r = run_child(kind, auth_url, args.catchup, args.baseline)
    seconds.append(r["seconds"])
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    if kind in ("stream", "stream-baseline"):
        LAST_ALERT.setdefault(kind, []).append(r["alerts_seconds"])
        print(
            f"catch-up of {args.catchup:,} events ({kind}, built-in pack): last event stored after "
            f"{r['seconds']:.1f} s (goal < 20 s), last alert of the backlog raised after "
            f"{r['alerts_seconds']:.1f} s (goal < 30 s); CPU {r['cpu_s']:.1f} s (by then "
            f"{r['command_cpu_s']:.1f} s in the command + {r['children_cpu_s']:.1f} s in its rules' "
            f"process), peak RSS {r['peak_rss_mb']:.0f} MB, WAL max {r['wal_max_mib']:.1f} MiB; load average {load}",
            flush=True,
        )
        return
    print(
        f"catch-up of {args.catchup:,} events ({kind}): {r['seconds']:.1f} s "
        f"({args.catchup / r['seconds']:,.0f} events/s), CPU {r['cpu_s']:.1f} s, peak RSS "
        f"{r['peak_rss_mb']:.0f} MB, WAL max {r['wal_max_mib']:.1f} MiB; load average {load}",
        flush=True,
    )


if __name__ == "__main__":
    sys.exit(main())
