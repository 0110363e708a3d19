"""`bench/proving_ground.py` (the proving ground in one command) keeps working: a tiny run prints the table with no
event lost, duplicated or reordered, and the database's size on disk next to its data. The full run is the script itself, not part of the suite. The soak's memory
verdict (bench/soak_memory.py) is checked on made-up sample series: a cache filling and freed heap kept by the
allocator are flat, a leak is not."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
SCRIPT = BENCH / "proving_ground.py"
sys.path.insert(0, str(BENCH))

import soak_memory  # noqa: E402


def test_a_tiny_proving_ground_run_prints_a_clean_table():
    run = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--quick",
            "--rounds",
            "2",
            "--soak-seconds",
            "6",
            "--only",
            "sigkill",
            "soak",
        ],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert run.returncode == 0, run.stdout + run.stderr[-3000:]
    lines = run.stdout.splitlines()
    assert lines[1].split()[:6] == ["scenario", "rounds", "sent", "stored", "lost", "dup"], run.stdout
    rows = {line.split()[0]: line.split() for line in lines[3:]}
    assert set(rows) == {"sigkill", "soak"}
    for cells in rows.values():
        sent, stored, lost, dup, order = cells[2:7]
        assert int(sent) > 0 and stored == sent and lost == dup == "0" and order == "ok", cells
    # The soak ran the CLI under bench/mem_probe.py: its memory is explained, and the end-of-run trim happened.
    assert "SQLite's page cache is bounded: PRAGMA cache_size = -" in run.stderr, run.stderr[-3000:]
    assert "malloc_trim(0) at the end: RSS" in run.stderr, run.stderr[-3000:]
    assert "→" in rows["soak"][-4] and "→" in rows["soak"][-3], rows["soak"]
    # The disk next to the data: the database holds the events' JSON, and the WAL stayed within its bounds.
    for cells in rows.values():
        data, database, fts = (float(x) for x in cells[-2].split("/"))
        assert 0 < data < database and fts >= 0, cells
        largest, after_stop = cells[-1].split("/")
        assert float(after_stop) <= 1.0, cells
    largest = float(rows["soak"][-1].split("/")[0])
    assert 0 < largest <= 16.0, rows["soak"]


def _series(
    *, warm_at: int, used_after: float, free_after: float, bound: float = 31.25
) -> list[dict[str, Any]]:
    """Samples every 10 s for 300 s: SQLite fills its cache by `warm_at`, then heap used / freed-but-kept heap
    grow linearly to +used_after / +free_after MiB by the end; RSS is the sum of the parts."""
    rows = []
    for t in range(0, 301, 10):
        after = max(0, t - warm_at) / (300 - warm_at)
        sqlite = bound * min(1.0, t / warm_at)
        used, free = 20 + sqlite + used_after * after, 3 + free_after * after
        anon = used + free + 22
        rows.append(
            {
                "t": t,
                "rss_mb": anon + 17,
                "anon_mb": anon,
                "file_mb": 17,
                "fds": 12,
                "sqlite_mb": sqlite,
                "sqlite_peak_mb": sqlite,
                "malloc_used_mb": used,
                "malloc_free_kept_mb": free,
            }
        )
    return rows


def _report(rows: list[dict[str, Any]], connections: int = 1) -> tuple[list[str], Any]:
    for row in rows:
        row["other_anon_mb"] = row["anon_mb"] - row["malloc_used_mb"] - row["malloc_free_kept_mb"]
    return soak_memory.report(rows, "-32000", 31.25, connections)


def test_the_soak_memory_verdict_tells_a_full_cache_and_kept_free_heap_from_a_leak():
    lines, cache_and_free_heap = _report(_series(warm_at=90, used_after=0.5, free_after=12))
    assert cache_and_free_heap.warm is not None and cache_and_free_heap.flat, lines
    assert cache_and_free_heap.live_growth == pytest.approx(0.5, abs=0.01)
    assert cache_and_free_heap.free_growth == pytest.approx(12, abs=0.01)
    lines, leak = _report(_series(warm_at=90, used_after=20, free_after=1))
    assert not leak.flat and leak.live_growth == pytest.approx(20, abs=0.01), lines
    assert any("GROWING" in line for line in lines)
    # A second connection that only checkpoints never fills its cache: the writer's full cache is the warm-up.
    lines, checkpointer = _report(_series(warm_at=90, used_after=0.5, free_after=12), connections=2)
    assert checkpointer.warm == cache_and_free_heap.warm and checkpointer.flat, lines
    # A run too short to fill the cache gives no verdict (its growth is the cache filling) and says so.
    lines, short = _report(_series(warm_at=600, used_after=0, free_after=0))
    assert short.warm is None and short.live_growth is None and short.flat
    assert any("never filled" in line for line in lines)
