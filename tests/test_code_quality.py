"""ruff (lint and format), mypy --strict, the import contracts and the modules' size limit run as part of the one test command."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent))
    if not found:
        pytest.fail(f"{name} is not installed in this environment; install the dev extras")
    return found


def _run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_clean():
    proc = _run(_tool("ruff"), "check", "desktop", "tests", "bench")
    assert proc.returncode == 0, proc.stdout[-4000:]


def test_ruff_format_clean():
    proc = _run(_tool("ruff"), "format", "--check", "desktop", "tests", "bench")
    assert proc.returncode == 0, proc.stdout[-4000:]


def test_mypy_strict_clean():
    proc = _run(_tool("mypy"))
    assert proc.returncode == 0, proc.stdout[-4000:]


def test_import_contracts():
    proc = _run(_tool("lint-imports"))
    assert proc.returncode == 0, proc.stdout[-4000:]


MODULE_LINES_MAX = 400


def test_no_module_over_400_lines():
    """Small modules named for what they hold: one past the limit is split along a seam, not let grow."""
    package = ROOT / "desktop" / "tenant_events"
    long = {
        path.relative_to(package).as_posix(): lines
        for path in sorted(package.rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MODULE_LINES_MAX
    }
    assert not long, f"modules over {MODULE_LINES_MAX} lines: " + ", ".join(
        f"{module} ({lines})" for module, lines in long.items()
    )
