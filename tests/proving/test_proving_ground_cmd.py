"""`bench/proving_ground.py` (the one command of issue 9) keeps working: a tiny run prints the table with no
event lost, duplicated or reordered. The full run is the script itself, not part of the suite."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "proving_ground.py"


def test_a_tiny_proving_ground_run_prints_a_clean_table():
    run = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--rounds", "2", "--soak-seconds", "6",
                          "--only", "sigkill", "soak"], capture_output=True, text=True, timeout=240)  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr[-3000:]
    lines = run.stdout.splitlines()
    assert lines[1].split()[:6] == ["scenario", "rounds", "sent", "stored", "lost", "dup"], run.stdout
    rows = {line.split()[0]: line.split() for line in lines[3:]}
    assert set(rows) == {"sigkill", "soak"}
    for cells in rows.values():
        sent, stored, lost, dup, order = cells[2:7]
        assert int(sent) > 0 and stored == sent and lost == dup == "0" and order == "ok", cells
