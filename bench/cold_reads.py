"""A few filters' first screens (or counts) over a built year, each read COLD: a new process, a new reader, its
first question; CPU time (the process with DuckDB's threads) and wall time. Given several code trees (each a
folder holding the `tenant_events` package, e.g. a checkout's `desktop/`), runs them alternately, filter by
filter, so pairs see the same load; the load average is listed beside every round.

    .venv/bin/python bench/cold_reads.py --dir /work/year30 --tree before=/tmp/old/desktop --tree after=desktop \
        --filters email,event-id --rounds 3
    .venv/bin/python bench/cold_reads.py --dir /work/year30 --tree after=desktop --filters phrase --count
    .venv/bin/python bench/cold_reads.py --dir /work/year30 --tree after=desktop --filters user,common --count \
        --histogram

With --histogram, the same reader then asks the filter's histogram of daily buckets (as bench/archive.py does
after a count), timed on its own.

The year is only read. Its e-mail and event id are picked as bench/archive.py picks them (a user.created event a
third of the way into the archive), once per run, and printed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

FILTERS = {
    "email": lambda p: {"query": f"email:{p['email']}"},
    "event-id": lambda p: {"text": p["event_id"]},
    "phrase": lambda p: {"query": '"ada lovelace" type:user.*'},
    "free-phrase": lambda p: {"text": "ada-lovelace"},
    "user": lambda p: {"query": "user:ada"},
    "ip": lambda p: {"query": "ip:203.0.113.7"},
    "orgs": lambda p: {"query": "org:acme OR org:globex"},
    "word": lambda p: {"text": "lovelace"},
    "common": lambda p: {"text": "example"},
}

_PICK = """
import json, sys
from pathlib import Path
from tenant_events.store.reader import EventReader
from tenant_events.values.events import EventFilter
with EventReader(Path(sys.argv[1])) as reader:
    sample = reader.page_before(EventFilter(types=frozenset({"user.created"})), reader.archived_upto() // 3, 1)[0]
    obj = json.loads(reader.get(sample.seq).raw or "{}")["event"]["data"]["object"]
    print(json.dumps({"email": obj["email"], "event_id": sample.event_id}))
"""

_ONE = """
import json, resource, sys, time
from pathlib import Path
from tenant_events.store.reader import EventReader
from tenant_events.values.events import EventFilter
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return (r.ru_utime + r.ru_stime) * 1000
kw, count, hist = json.loads(sys.argv[2]), sys.argv[3] == "count", sys.argv[4] == "histogram"
with EventReader(Path(sys.argv[1])) as reader:
    f = EventFilter(**kw)
    c, w = cpu(), time.perf_counter()
    n = reader.count(f) if count else len(reader.page_before(f, None, 256))
    out = {"cpu": cpu() - c, "wall": (time.perf_counter() - w) * 1000, "n": n}
    if hist:
        c, w = cpu(), time.perf_counter()
        rows = reader.histogram(f, 86400)
        out |= {"h_cpu": cpu() - c, "h_wall": (time.perf_counter() - w) * 1000}
        out["h_n"] = sum(sum(d.values()) for _b, d in rows)
    print(json.dumps(out))
"""


def _run(tree: str, code: str, *args: str) -> Any:
    env = {**os.environ, "PYTHONPATH": tree}
    done = subprocess.run(
        [sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--dir", type=Path, required=True, help="a year built by bench/archive.py (read only)"
    )
    parser.add_argument("--tree", action="append", required=True, help="name=folder holding tenant_events")
    parser.add_argument("--filters", default="email,event-id", help=", ".join(FILTERS))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--count", action="store_true", help="a cold count instead of the first screen")
    parser.add_argument("--histogram", action="store_true", help="then the histogram of daily buckets")
    args = parser.parse_args()
    db = args.dir / "tenants" / "year.sqlite3"
    trees = dict(t.split("=", 1) for t in args.tree)
    picked = _run(next(iter(trees.values())), _PICK, str(db))
    print(f"picked {picked}", flush=True)
    what = "count" if args.count else "first"
    seen: dict[tuple[str, str], list[tuple[float, float]]] = {}
    hist = "histogram" if args.histogram else "none"
    for r in range(args.rounds):
        for name in args.filters.split(","):
            kw = json.dumps(FILTERS[name](picked))
            for tree, path in trees.items():
                load = os.getloadavg()[0]
                out = _run(path, _ONE, str(db), kw, what, hist)
                seen.setdefault((name, tree), []).append((out["cpu"], out["wall"]))
                then = ""
                if "h_cpu" in out:
                    seen.setdefault((f"{name}:hist", tree), []).append((out["h_cpu"], out["h_wall"]))
                    then = f"  histogram cpu {out['h_cpu']:7.0f} ms  wall {out['h_wall']:7.0f} ms ({out['h_n']:,})"
                print(
                    f"round {r + 1} {name:12} {tree:10} {what} cpu {out['cpu']:7.0f} ms  wall {out['wall']:7.0f} ms"
                    f"  ({out['n']:,}){then}  load {load:.2f}",
                    flush=True,
                )
    for (name, tree), runs in seen.items():
        cpus, walls = [c for c, _w in runs], [w for _c, w in runs]
        print(
            f"{name:12} {tree:10} cpu {min(cpus):.0f}-{max(cpus):.0f} (median {statistics.median(cpus):.0f})"
            f"  wall {min(walls):.0f}-{max(walls):.0f} (median {statistics.median(walls):.0f}) ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
