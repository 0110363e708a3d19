"""The proving ground's hub row (bench/proving_ground.py --only hub) keeps working: a tiny run of relay and
viewer kills on a 3-node cluster prints the row with nothing lost, duplicated or reordered."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from helpers.slack import bound

pytestmark = pytest.mark.hub
SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "proving_ground.py"


def test_a_tiny_hub_row_is_clean():
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--only", "hub"], capture_output=True, text=True, timeout=240
    )
    assert run.returncode == 0, run.stdout + run.stderr[-3000:]
    cells = next(line.split() for line in run.stdout.splitlines() if line.startswith("hub "))
    rounds, sent, stored, lost, dup, order = cells[1:7]
    assert int(rounds) == 3 and int(sent) > 2000, cells
    assert stored == sent and lost == dup == "0" and order == "ok", cells
    assert float(cells[8]) < bound(15), f"a round took {cells[8]} s to recover"  # a most, stretched for load
