"""The desktop's one bound on SQLite's memory: connections with big page caches reading a database larger than
the bound stay near it together, where without it each cache fills to its own bound."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PROBE = """
import ctypes, json, sqlite3, sys
import _sqlite3
from tenant_events.store.memory_limit import limit_sqlite_memory
lib = ctypes.CDLL(_sqlite3.__file__)
lib.sqlite3_memory_used.restype = ctypes.c_int64
path, mode = sys.argv[1], sys.argv[2]
if mode == "limit":
    limit_sqlite_memory(8 * 2**20)
conns = [sqlite3.connect(path) for _ in range(3)]  # as the window's readers: each with a 32 MB cache
for conn in conns:
    conn.execute("PRAGMA cache_size = -32000")
    for _ in conn.execute("SELECT * FROM t"):  # every page of a ~20 MB table through each cache
        pass
peak = lib.sqlite3_memory_used() / 2**20
again = conns[0].execute("SELECT count(*), sum(length(body)) FROM t").fetchone()
print(json.dumps({"mb": round(peak, 1), "rows": again[0], "bytes": again[1]}))
"""
CHECK = """
import json, sys
from tenant_events.store.memory_limit import limit_sqlite_memory
print(json.dumps([limit_sqlite_memory(5 * 2**20), limit_sqlite_memory(0)]))
"""


def _fill(path: Path) -> None:
    import sqlite3

    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)")
    conn.executemany("INSERT INTO t (body) VALUES (?)", ((f"{i:08d}" * 250,) for i in range(10_000)))
    conn.commit()
    conn.close()


def _probe(*args: str) -> dict[str, float]:
    done = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_connections_share_the_bound_and_read_everything_still(tmp_path: Path) -> None:
    db = tmp_path / "big.sqlite3"
    _fill(db)
    unbounded, bounded = _probe(str(db), "none"), _probe(str(db), "limit")
    assert unbounded["mb"] > 40  # three caches of ~20 MB each: the growth the bound is for
    assert bounded["mb"] < 12  # the 8 MB bound, with a little over for what is in use
    assert bounded["rows"] == unbounded["rows"] == 10_000 and bounded["bytes"] == unbounded["bytes"]


def test_setting_the_bound_reports_the_one_before() -> None:
    done = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [0, 5 * 2**20]


GUI = """
import sqlite3, sys
import tenant_events.ui.app.launch as launch
from tenant_events.cli.main import main
def where_the_window_would_open(*_args):
    print(sqlite3.connect(":memory:").execute("PRAGMA soft_heap_limit").fetchone()[0])
    return 0
launch.run_gui = where_the_window_would_open
sys.exit(main(["gui", "--data-dir", sys.argv[1]]))
"""


def test_the_desktop_command_sets_the_bound(tmp_path: Path) -> None:
    from tenant_events.store.memory_limit import DESKTOP_SQLITE_BYTES

    done = subprocess.run(
        [sys.executable, "-c", GUI, str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.strip().splitlines()[-1]) == DESKTOP_SQLITE_BYTES
