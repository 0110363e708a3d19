"""Reads bench/mem_probe.py's samples of the soak's CLI and says where its memory went (the goal: "memory flat").

The CLI's RSS rises for a while and then creeps. The samples split it: SQLite's own memory (`sqlite3_memory_used`)
climbs to the page cache's bound (`PRAGMA cache_size` of each connection the CLI holds) and stays there; glibc's
heap in use stays flat once that cache is full; what creeps is heap that was freed but that the allocator kept
(`malloc_trim(0)` at the end hands it back, and the RSS drops by about that much). So the report gives RSS at the
start, once the cache is full ("warm") and at the end, the growth since warm-up split by part, and judges
"live" growth — the growth that is not the allocator's freed-but-kept heap — against LIVE_GROWTH_LIMIT_MB.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

LIVE_GROWTH_LIMIT_MB: Final = 8.0  # after warm-up; a leak of even 100 bytes an event passes it within a day
FULL: Final = 0.95  # SQLite counts as "at its bound" from this share of the cache bound on ...
PLATEAU: Final = 0.98  # ... and from this share of its level at the end of the run
PARTS: Final = {
    "sqlite_mb": "SQLite",
    "malloc_used_mb": "heap used",
    "malloc_free_kept_mb": "heap free",
    "other_anon_mb": "other anon",
    "file_mb": "files",
}


@dataclass(frozen=True)
class Verdict:
    start: float  # RSS MiB at the first sample
    warm: float | None  # RSS MiB once SQLite's cache was full; None if it never filled
    end: float  # RSS MiB at the last sample before the end-of-run trim
    live_growth: float | None  # MiB since warm-up that is not the allocator's free heap; None if never warm
    free_growth: float  # MiB of freed-but-kept heap gained since warm-up (or the start)

    @property
    def flat(self) -> bool:
        return self.live_growth is None or self.live_growth <= LIVE_GROWTH_LIMIT_MB


def read_samples(path: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for r in rows:  # anonymous RSS outside glibc's heap: Python's object arenas (pymalloc maps them), stacks
        r["other_anon_mb"] = round(
            r["anon_mb"] - r.get("malloc_used_mb", 0) - r.get("malloc_free_kept_mb", 0), 1
        )
    return rows


def cache_bound(db: Path) -> tuple[str, float]:
    """(the cache_size setting, the page cache's bound in MiB) of one connection to `db` as the CLI opens it."""
    knob = os.environ.get("TENANT_EVENTS_PROBE_CACHE_KIB")
    if knob:
        return f"-{int(knob)} (TENANT_EVENTS_PROBE_CACHE_KIB, not the product's)", int(knob) / 1024
    from tenant_events.store.schema import connect

    conn = connect(db, readonly=True)
    try:
        size = int(conn.execute("PRAGMA cache_size").fetchone()[0])
        page = int(conn.execute("PRAGMA page_size").fetchone()[0])
    finally:
        conn.close()
    # Negative: a size in KiB; positive: a number of pages (sqlite.org/pragma.html#pragma_cache_size).
    return str(size), (-size if size < 0 else size * page / 1024) / 1024


def _row(r: dict[str, Any]) -> str:
    cells = [f"{r['t']:>7.0f}", f"{r['rss_mb']:>6.1f}"] + [
        f"{r.get(k, 0):>{len(v)}.1f}" for k, v in PARTS.items()
    ]
    return " ".join([*cells, f"{r['fds']:>3}"])


def report(
    samples: list[dict[str, Any]],
    setting: str,
    bound: float,
    connections: int,
    start: float = 0.0,
    start_rss: float | None = None,
) -> tuple[list[str], Verdict]:
    """`start`: seconds into the CLI's run where the soak's "start" is (stream connected, database open), and
    `start_rss` the RSS measured then (samples are minutes apart in a long soak)."""
    # The soak's samples end with the one taken just before the end-of-run trim.
    end = next((i for i, r in enumerate(samples) if "trim" in r or r.get("final")), len(samples))
    end += samples[end].get("trim") == "before" if end < len(samples) else 0
    running = [r for r in samples[:end] if r["t"] >= start] or samples[:end]
    step = max(1, len(running) // 15)
    shown = running[::step] if running[-1] in running[::step] else [*running[::step], running[-1]]
    lines = [
        "memory of the CLI (MiB): SQLite = sqlite3_memory_used(); heap used / heap free = glibc mallinfo2 (free:",
        "released by the program, kept by the allocator); other anon = the rest of the anonymous RSS (Python's object",
        "arenas, thread stacks); files = file-backed RSS (code, the WAL index); fds = open file descriptors",
        f"{'t s':>7} {'RSS':>6} " + " ".join(PARTS.values()) + " fds",
        *map(_row, shown),
    ]
    peak = max(r.get("sqlite_peak_mb", 0) for r in samples)
    lines.append(
        f"SQLite's page cache is bounded: PRAGMA cache_size = {setting} → {bound:.1f} MiB for each of the "
        f"{connections} connection(s) the CLI holds on the database (at most {bound * connections:.1f} MiB); "
        f"SQLite's memory peaked at {peak:.1f} MiB."
    )
    first, last = running[0], running[-1]  # last: the end of the soak, before the trim
    if start_rss is not None:
        first = {**first, "t": start, "rss_mb": start_rss}
    # Warm: SQLite has stopped growing — at its final level, and at least one connection's cache is full (the
    # writer's; a connection that only checkpoints or reads now and then holds far less than its bound).
    full = max(FULL * bound, PLATEAU * last.get("sqlite_mb", 0))
    warm = next((r for r in running if r.get("sqlite_mb", 0) >= full), None)
    base = warm or first
    grew = {k: last.get(k, 0) - base.get(k, 0) for k in PARTS}
    rss_growth = last["rss_mb"] - base["rss_mb"]
    live = None if warm is None else rss_growth - grew["malloc_free_kept_mb"]
    if warm is None:
        lines.append(
            f"The cache never filled in this run (SQLite at {last.get('sqlite_mb', 0):.1f} MiB at the end), "
            "so the growth includes it filling: run longer to see the plateau."
        )
    lines.append(
        f"RSS {first['rss_mb']:.1f} MiB at t={first['t']:.0f} s"
        + (f", {warm['rss_mb']:.1f} once the cache was full (t={warm['t']:.0f} s)" if warm else "")
        + f", {last['rss_mb']:.1f} at the end (t={last['t']:.0f} s): {rss_growth:+.1f} since "
        + ("warm-up" if warm else "the start")
        + " — "
        + ", ".join(f"{name} {grew[k]:+.1f}" for k, name in PARTS.items())
    )
    if live is not None:
        lines.append(
            f"growth since warm-up that is not freed-but-kept heap: {live:+.1f} MiB (limit "
            f"{LIVE_GROWTH_LIMIT_MB:.0f}): {'flat' if live <= LIVE_GROWTH_LIMIT_MB else 'GROWING'}"
        )
    trims = {r["trim"]: r for r in samples if "trim" in r}
    if {"before", "after"} <= trims.keys():
        lines.append(
            f"malloc_trim(0) at the end: RSS {trims['before']['rss_mb']:.1f} → {trims['after']['rss_mb']:.1f} MiB "
            "(heap the allocator had kept after the program freed it, handed back to the kernel)"
        )
    if "grew" in samples[-1]:
        lines.append("Python allocation sites that grew most after the settle time (tracemalloc):")
        lines += [f"  {g}" for g in samples[-1]["grew"]]
    verdict = Verdict(
        first["rss_mb"], warm["rss_mb"] if warm else None, last["rss_mb"], live, grew["malloc_free_kept_mb"]
    )
    return lines, verdict


def main() -> int:
    """Explain a kept sample file again (proving_ground.py --memory-log)."""
    import argparse

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("samples", type=Path)
    ap.add_argument("--cache-kib", type=int, default=32000, help="PRAGMA cache_size = -N of the run")
    ap.add_argument("--connections", type=int, default=1)
    ap.add_argument("--start", type=float, default=0.0, help="seconds into the run where the soak starts")
    args = ap.parse_args()
    lines, verdict = report(
        read_samples(args.samples), f"-{args.cache_kib}", args.cache_kib / 1024, args.connections, args.start
    )
    print("\n".join(lines))
    return 0 if verdict.flat else 1


if __name__ == "__main__":
    raise SystemExit(main())
