"""Where the alert rules' time goes during a catch-up, as the app evaluates them (on the store's writer thread,
after each commit; bench/ingest.py, consumer "rules").

One simulator subprocess serves a backlog; this process stores it with the stream engine and evaluates the whole
built-in pack, timing the writer thread's CPU in each part of a step:

  directory  opening the entity directory, and bringing it up when a new or live alert's detail names who and
             what (a catch-up leaves it to the idle-time indexer)
  names      wording the alerts' details with the directory's names (evaluator.py `_details`), the update
             before an event read back from the store (`earlier_object`)
  feed       the rules applied to the rows (rule_engine.py), the state checks' links kept on the way, less
             the look-ups it makes (names)
  rest       everything else in the step: reading rows, writing alerts and the watermark

with how many look-ups each kind of directory query made (an entity's history, `objects_of`, is the costly
one: it searches the events not yet in the full-text index by substring),

and, beside them, the CPU of the whole process and of the simulator while the backlog was stored. Every run is
listed.

    .venv/bin/python bench/rules_cost.py --events 100000 --runs 3
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import sim_process

OLD = "2000-01-01T00:00:00Z"
SPENT: Counter[str] = Counter()
CALLS: Counter[str] = Counter()  # directory look-ups made while evaluating, by kind
_OPEN: list[str] = []  # the parts being timed on the writer thread, innermost last


def _timed(owner: Any, attribute: str, part: str) -> None:
    """Time `owner.attribute` as `part`; time spent in a part nested in it counts for the nested one only."""
    inner = getattr(owner, attribute)

    @functools.wraps(inner)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.thread_time()
        CALLS[attribute] += 1
        _OPEN.append(part)
        nested_before = SPENT["_nested"]
        try:
            return inner(*args, **kwargs)
        finally:
            _OPEN.pop()
            took = time.thread_time() - started
            nested = SPENT["_nested"] - nested_before
            SPENT[part] += took - nested
            SPENT["_nested"] = nested_before + (took if _OPEN else 0)

    setattr(owner, attribute, wrapper)


async def _run(url: str, token: str, n: int, sim_pid: int) -> dict[str, float]:
    from tenant_events.alert_settings import AlertSettings
    from tenant_events.alerts.from_settings import build_evaluator
    from tenant_events.alerts.runner import AlertRunner
    from tenant_events.store import StoreWriter
    from tenant_events.stream.engine import EngineConfig, StreamEngine
    from tenant_events.stream.tokens import StaticTokenProvider

    SPENT.clear()
    CALLS.clear()
    tmp = Path(tempfile.mkdtemp(prefix="bench-rules-cost-"))
    writer = StoreWriter(tmp / "bench.sqlite3")
    engine = StreamEngine(
        EngineConfig(url + "/api/v2", from_timestamp=OLD, name="bench"), StaticTokenProvider(token), writer
    )
    runner = AlertRunner(build_evaluator(AlertSettings(), "bench"), lambda: writer)
    step = runner.evaluator.step

    def timed_step(ledger: Any) -> Any:
        started = time.thread_time()
        try:
            return step(ledger)
        finally:
            SPENT["step"] += time.thread_time() - started

    runner.evaluator.step = timed_step  # type: ignore[method-assign]
    engine.on_commit.append(runner.kick)
    done = asyncio.Event()
    engine.on_commit.append(lambda _r: done.set() if engine.stats.events_stored >= n else None)
    cpu, sim_cpu, started = time.process_time(), sim_process.process_cpu(sim_pid), time.perf_counter()
    task = asyncio.create_task(engine.run())
    waiter = asyncio.ensure_future(done.wait())
    await asyncio.wait({waiter, task}, return_when=asyncio.FIRST_COMPLETED)
    if not waiter.done():
        waiter.cancel()
        shutil.rmtree(tmp)
        raise SystemExit(f"the engine stopped before the backlog was stored: {engine.stats}")
    stored = time.perf_counter() - started
    await runner.drain()
    out = {
        "stored_s": stored,
        "evaluated_s": time.perf_counter() - started,
        "process_cpu": time.process_time() - cpu,
        "sim_cpu": sim_process.process_cpu(sim_pid) - sim_cpu,
        **{k: v for k, v in SPENT.items() if not k.startswith("_")},
    }
    engine.stop()
    await task
    writer.close()
    shutil.rmtree(tmp)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    from tenant_events.alerts import evaluator
    from tenant_events.alerts.rule_engine import RuleEngine
    from tenant_events.store.alerts_table import AlertLedger
    from tenant_events.store.entity_reader import DirectoryReader

    _timed(AlertLedger, "directory", "directory")
    _timed(RuleEngine, "feed", "feed")
    _timed(evaluator, "_details", "names")
    _timed(AlertLedger, "earlier_object", "names")
    for lookup in ("objects_of", "event_data", "entities", "entity"):
        _timed(DirectoryReader, lookup, "names")
    sim, url = sim_process.start_simulator(
        args.events, "--real-names", "--burst-every", "0", "--heartbeat", "1"
    )
    try:
        token = sim_process.admin_token(url)
        for run in range(1, args.runs + 1):
            r = asyncio.run(_run(url, token, args.events, sim.pid))
            parts = ("directory", "names", "feed")
            rest = r["step"] - sum(r.get(part, 0.0) for part in parts)
            lookups = ", ".join(
                f"{k} {v:,}" for k, v in sorted(CALLS.items()) if k not in ("feed", "directory", "_details")
            )
            print(
                f"run {run}: stored in {r['stored_s']:.2f} s, evaluated in {r['evaluated_s']:.2f} s; CPU: process "
                f"{r['process_cpu']:.2f} s, simulator {r['sim_cpu']:.2f} s; rules {r['step']:.2f} s = "
                + " + ".join(f"{part} {r.get(part, 0.0):.2f}" for part in parts)
                + f" + rest {rest:.2f}; look-ups: {lookups or 'none'}",
                flush=True,
            )
    finally:
        sim.terminate()
        sim.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
