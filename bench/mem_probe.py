"""Runs `tenant-events ARGS` in this process and samples where its memory is, to tell a cache from a leak.

    .venv/bin/python bench/mem_probe.py --out probe.jsonl [--every 5] [--tracemalloc] -- stream --base-url ...

Every `--every` seconds one JSON line goes to `--out`: RSS and the anonymous part of it (/proc/self/smaps_rollup),
what SQLite holds (`sqlite3_memory_used()` and its high-water mark, read through ctypes from the same
libsqlite3 the `sqlite3` module uses: Python's module exposes no status call), glibc's malloc totals
(`mallinfo2`: in use vs free-but-kept in arenas), and with --tracemalloc the bytes Python objects hold. A
growing RSS with flat SQLite and flat Python memory is the allocator; SQLite growing to its cache bound and
stopping is the page cache; Python memory growing is a leak. With --tracemalloc, the last line also lists the
allocation sites that grew most between the first sample after `--settle` seconds and the end. SIGUSR1 writes
a sample, glibc's `malloc_info` XML (free chunks by size in each arena) to OUT.malloc_info.xml, calls
`malloc_trim(0)` and writes another sample ("trim": "before"/"after"). --tracemalloc costs CPU and memory of its
own, and the baseline snapshot leaves ~15 MiB of freed heap behind: read its RSS as relative only.

`TENANT_EVENTS_PROBE_CACHE_KIB=N` makes every database connection use `PRAGMA cache_size = -N` (an experiment
knob for this probe only: it wraps `store.schema.connect`, the product is unchanged).
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import json
import os
import signal
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any, TextIO


class _Mallinfo2(ctypes.Structure):
    """glibc's `struct mallinfo2` (all fields size_t)."""

    _fields_ = [
        (name, ctypes.c_size_t)
        for name in [
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        ]
    ]


def _libsqlite() -> ctypes.CDLL | None:
    """The libsqlite3 already loaded by `_sqlite3` (dlopen of the same soname returns the same instance)."""
    import _sqlite3

    for candidate in (_sqlite3.__file__, ctypes.util.find_library("sqlite3")):
        try:
            lib = ctypes.CDLL(candidate)
            lib.sqlite3_memory_used.restype = ctypes.c_int64
            lib.sqlite3_memory_highwater.restype = ctypes.c_int64
            lib.sqlite3_memory_highwater.argtypes = [ctypes.c_int]
            return lib
        except (OSError, AttributeError, TypeError):
            continue
    return None


def _libc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = _Mallinfo2
        return libc
    except (OSError, AttributeError):
        return None


def smaps_rollup() -> dict[str, int]:
    """kB fields of /proc/self/smaps_rollup (Rss, Anonymous, Shared_*, Private_*...)."""
    out: dict[str, int] = {}
    for line in Path("/proc/self/smaps_rollup").read_text().splitlines()[1:]:
        key, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[-1] == "kB":
            out[key] = int(parts[0])
    return out


class Sampler:
    def __init__(self, out: TextIO, every: float, settle: float, top: int) -> None:
        self.out, self.every, self.settle, self.top = out, every, settle, top
        self.started = time.monotonic()
        self.sqlite, self.libc = _libsqlite(), _libc()
        self.baseline: tracemalloc.Snapshot | None = None
        self.stop = threading.Event()
        self.trim = threading.Event()

    def sample(self) -> dict[str, Any]:
        smaps = smaps_rollup()
        row: dict[str, Any] = {
            "t": round(time.monotonic() - self.started, 1),
            "rss_mb": round(smaps["Rss"] / 1024, 1),
            "anon_mb": round(smaps.get("Anonymous", 0) / 1024, 1),
            "file_mb": round((smaps["Rss"] - smaps.get("Anonymous", 0)) / 1024, 1),
            "fds": len(os.listdir("/proc/self/fd")),
            "threads": threading.active_count(),
        }
        if self.sqlite is not None:
            row["sqlite_mb"] = round(self.sqlite.sqlite3_memory_used() / 2**20, 1)
            row["sqlite_peak_mb"] = round(self.sqlite.sqlite3_memory_highwater(0) / 2**20, 1)
        if self.libc is not None:
            mi = self.libc.mallinfo2()
            row["malloc_used_mb"] = round((mi.uordblks + mi.hblkhd) / 2**20, 1)
            row["malloc_free_kept_mb"] = round(mi.fordblks / 2**20, 1)
        if tracemalloc.is_tracing():
            row["python_mb"] = round(tracemalloc.get_traced_memory()[0] / 2**20, 1)
            if self.baseline is None and row["t"] >= self.settle:
                self.baseline = tracemalloc.take_snapshot()
        return row

    def write(self, row: dict[str, Any]) -> None:
        self.out.write(json.dumps(row) + "\n")
        self.out.flush()

    def run(self) -> None:
        due = time.monotonic() + self.every
        while not self.stop.is_set():
            if self.trim.wait(max(0.0, min(due - time.monotonic(), 0.2))):
                self.trim.clear()
                self.trim_heap()
            if time.monotonic() >= due:
                self.write(self.sample())
                due += self.every

    def _malloc_info(self, path: str) -> None:
        """glibc's malloc_info XML (every arena's free chunks by size, its top, its mmapped heaps) to `path`."""
        assert self.libc is not None
        self.libc.fopen.restype = ctypes.c_void_p
        self.libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
        self.libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
        self.libc.fclose.argtypes = [ctypes.c_void_p]
        stream = self.libc.fopen(path.encode(), b"w")
        if stream:
            self.libc.malloc_info(0, stream)
            self.libc.fclose(stream)

    def trim_heap(self) -> None:
        """One sample, glibc's malloc_trim(0) (free pages of every arena back to the kernel), one more: the RSS
        that goes away is heap the allocator kept after the program freed it, not memory anything holds."""
        before = self.sample()
        before["trim"] = "before"
        self.write(before)
        if self.libc is not None:
            self._malloc_info(self.out.name + ".malloc_info.xml")
            self.libc.malloc_trim(0)
        after = self.sample()
        after["trim"] = "after"
        self.write(after)

    def final(self) -> None:
        row = self.sample()
        row["final"] = True
        if tracemalloc.is_tracing() and self.baseline is not None:
            diff = tracemalloc.take_snapshot().compare_to(self.baseline, "lineno")
            row["grew"] = [
                f"{d.size_diff / 1024:+.0f} KiB {d.count_diff:+d} blocks {d.traceback}"
                for d in diff[: self.top]
            ]
        self.write(row)


def _cache_knob() -> None:
    kib = os.environ.get("TENANT_EVENTS_PROBE_CACHE_KIB")
    if not kib:
        return
    from tenant_events.store import schema

    inner = schema.connect

    def connect(path: Path, *, readonly: bool = False) -> Any:
        conn = inner(path, readonly=readonly)
        conn.execute(f"PRAGMA cache_size = -{int(kib)}")
        return conn

    schema.connect = connect  # type: ignore[assignment]
    import tenant_events.store.reader as reader

    reader.connect = connect  # type: ignore[assignment]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="JSON lines of samples")
    ap.add_argument("--every", type=float, default=5.0, help="seconds between samples")
    ap.add_argument("--tracemalloc", action="store_true", help="also trace Python allocations (slower)")
    ap.add_argument("--settle", type=float, default=60.0, help="tracemalloc baseline after this many seconds")
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("args", nargs=argparse.REMAINDER, help="-- then the tenant-events arguments")
    ns = ap.parse_args()
    argv = ns.args[1:] if ns.args[:1] == ["--"] else ns.args
    if ns.tracemalloc:
        tracemalloc.start(1)
    _cache_knob()
    from tenant_events.cli.main import main as cli_main

    with ns.out.open("w", encoding="utf-8") as out:
        sampler = Sampler(out, ns.every, ns.settle, ns.top)
        sampler.write(sampler.sample())
        signal.signal(signal.SIGUSR1, lambda _signum, _frame: sampler.trim.set())
        thread = threading.Thread(target=sampler.run, name="mem-probe", daemon=True)
        thread.start()
        try:
            return cli_main(argv)
        finally:
            sampler.stop.set()
            thread.join()
            sampler.final()


if __name__ == "__main__":
    raise SystemExit(main())
