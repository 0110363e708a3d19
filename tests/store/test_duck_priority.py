"""DuckDB's threads run below the priority of the thread that first asks for the engine (the window's, which
draws): a year's scan on both cores of a two-core machine made a 15 ms paint wait 100-300 ms for a core."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tenant_events.thread_priority import BACKGROUND_NICENESS

_CHILD = """
import os, threading
from pathlib import Path

def niceness():
    found = {}
    for task in Path("/proc/self/task").iterdir():
        found[int(task.name)] = int((task / "stat").read_text().rsplit(")", 1)[1].split()[16])
    return found

import duckdb  # (its import starts a thread of its own, at the importer's priority)
from tenant_events.store import duck
before = niceness()
duck.engine()
after = niceness()
print(os.getpriority(os.PRIO_PROCESS, 0), sorted(v for k, v in after.items() if k not in before))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="niceness is per thread on Linux only")
def test_duckdbs_threads_start_below_the_thread_that_asks():
    out = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, check=True).stdout
    ours, started = out.split(" ", 1)
    lower = min(int(ours) + BACKGROUND_NICENESS, 19)
    assert eval(started) and set(eval(started)) == {lower}
