"""The full-text indexer's CPU per event with the raw JSON's escapes decoded (store/fts_text.py) against the
raw JSON as spelled, in alternate runs of the same chunks (A B A B …); then `indexed_raw` alone, per event
without and with a `\\u`, and schema 9's re-indexing over the same events.

    .venv/bin/python bench/index_escapes.py [--events 20000] [--share 0.05] [--pairs 5]
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from helpers.history import history  # noqa: E402
from tenant_events.store import Batch, EventRow, StoreWriter, indexer  # noqa: E402
from tenant_events.store.fts_text import indexed_raw, reindex_escaped  # noqa: E402
from tenant_events.store.schema import connect  # noqa: E402

SPELLED = r"Percy O\u0027Brien \u0026 Ren\u00e9"  # as .NET's default encoder writes "Percy O'Brien & René"


def _rows(n: int, share: float) -> list[EventRow]:
    rows = history(n, time.time() - 86400, 86400 / n, seed=3)
    every = round(1 / share) if share else 0
    for k in range(0, n, every) if every else ():
        data = orjson.loads(rows[k].raw)
        data["event"]["xname"] = "@NAME@"
        rows[k] = rows[k]._replace(raw=orjson.dumps(data).decode().replace("@NAME@", SPELLED))
    return rows


def _unindexed(folder: Path, rows: list[EventRow]) -> Path:
    """A database of `rows` with their summaries, the directory and the access history, and no full-text index."""
    path = folder / "base.sqlite3"
    writer = StoreWriter(path)
    try:
        for at in range(0, len(rows), 500):
            writer.commit_sync(Batch(events=rows[at : at + 500]))
        writer.index_all_sync()
    finally:
        writer.close()
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("INSERT INTO events_fts (events_fts) VALUES ('delete-all')")
        conn.execute("UPDATE counters SET value = 0 WHERE name = 'fts_upto'")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return path


def _index(base: Path, text: Callable[[str], str]) -> float:
    """CPU seconds of indexing a copy of `base` with `text` as the indexer's text of the raw JSON."""
    path = base.with_name("run.sqlite3")
    shutil.copy(base, path)
    indexer.indexed_raw = text  # type: ignore[attr-defined]
    conn = connect(path)
    try:
        start = time.process_time()
        while indexer.index_chunk(conn) == indexer.FTS_CHUNK:
            pass
        spent = time.process_time() - start
        if text is _spelled:  # the upgrade of such a database: its rows indexed as spelled, indexed again
            conn.execute("BEGIN IMMEDIATE")
            start = time.process_time()
            again = reindex_escaped(conn)
            print(f"  schema 9 re-indexed {again} rows in {time.process_time() - start:.3f} s CPU")
            conn.execute("ROLLBACK")
    finally:
        conn.close()
        for p in base.parent.glob("run.sqlite3*"):
            p.unlink()
    return spent


def _spelled(raw: str) -> str:
    return raw


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=20000)
    ap.add_argument("--share", type=float, default=0.05, help="share of events whose JSON holds escapes")
    ap.add_argument("--pairs", type=int, default=5)
    args = ap.parse_args()
    rows = _rows(args.events, args.share)
    raws = [r.raw for r in rows]
    with tempfile.TemporaryDirectory() as tmp:
        base = _unindexed(Path(tmp), rows)
        escaped = sum("\\u" in r for r in raws)
        print(f"{args.events} events, {escaped} with a \\u")
        runs: dict[str, list[float]] = {"spelled": [], "decoded": []}
        for pair in range(args.pairs + 1):  # the first pair warms up
            for name, text in (("spelled", _spelled), ("decoded", indexed_raw)):
                spent = _index(base, text)
                if pair:
                    runs[name].append(spent)
    ratios = [b / a for a, b in zip(runs["spelled"], runs["decoded"], strict=True)]
    a, b = (statistics.median(runs[k]) * 1e6 / args.events for k in ("spelled", "decoded"))
    print(f"indexing: spelled {a:.1f} µs/event, decoded {b:.1f} µs/event (medians of {args.pairs});")
    print(
        f"  decoded/spelled pair by pair: median {statistics.median(ratios):.3f}, {min(ratios):.3f}-{max(ratios):.3f}"
    )
    for label, some in (
        ("without \\u", [r for r in raws if "\\u" not in r]),
        ("with \\u", [r for r in raws if "\\u" in r]),
    ):
        if some:
            reps = max(1, 200_000 // len(some))
            start = time.process_time()
            for _ in range(reps):
                for raw in some:
                    indexed_raw(raw)
            ns = (time.process_time() - start) * 1e9 / (reps * len(some))
            print(f"indexed_raw {label}: {ns:.0f} ns/event (a call included)")


if __name__ == "__main__":
    main()
