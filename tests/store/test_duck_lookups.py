"""A query with parameters costs DuckDB's work, not a search of the import path: DuckDB asks for pandas each time
it binds parameters, and the app, which has no pandas, answers at once that there is none."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "desktop" / "tenant_events"

_CHILD = """
import sys
from collections import Counter
from tenant_events.store import duck

looked: Counter[str] = Counter()


class Spy:
    def find_spec(self, name, path=None, target=None):
        looked[name] += 1


conn = duck.cursor()
sys.meta_path.insert(0, Spy())
for n in range(50):
    conn.execute("SELECT ? + 1", [n]).fetchall()
print(looked["pandas"])
"""


def test_a_query_with_parameters_searches_the_import_path_for_nothing():
    env = {**os.environ, "PYTHONPATH": str(PACKAGE.parent)}
    out = subprocess.run(
        [sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.split() == ["0"], out.stdout + out.stderr
