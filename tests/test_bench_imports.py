"""The benchmark scripts name app modules that exist: bench/ is run by hand, so a moved module would otherwise
show only the next time someone measures."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


def _app_imports(path: Path) -> list[tuple[str, str | None]]:
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tenant_events"):
            found += [(node.module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(alias.name, None) for alias in node.names if alias.name.startswith("tenant_events")]
    return found


@pytest.mark.parametrize("script", sorted(BENCH.glob("*.py")), ids=lambda p: p.name)
def test_every_app_name_a_bench_script_imports_exists(script: Path) -> None:
    for module, name in _app_imports(script):
        loaded = importlib.import_module(module)
        if name is not None and not hasattr(loaded, name):
            importlib.import_module(f"{module}.{name}")  # a submodule named in `from package import module`
