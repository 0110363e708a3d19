"""What the rules' process does to stay cheap: it runs Python's cycle collector seldom (alerts/gc_policy.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tenant_events.alerts import gc_policy


def test_the_rules_process_runs_the_cycle_collector_seldom():
    code = (
        "import gc\n"
        "from concurrent.futures import ThreadPoolExecutor\n"
        "from tenant_events.alerts import evaluator_child\n"
        "evaluator_child.main(ThreadPoolExecutor(1))\n"  # (stdin empty: it starts and ends)
        "print(gc.get_threshold()[0], gc.get_freeze_count() > 0)\n"
    )
    desktop = Path(gc_policy.__file__).parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(desktop), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run(
        [sys.executable, "-c", code],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(gc_policy.YOUNG_PASS), "True"]
