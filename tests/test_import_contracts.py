"""The import contracts cover every core module, and a planted back-import really breaks them.

`test_code_quality` proves the real tree keeps the contracts; these tests prove the contracts would notice if it
did not: each plants one import that runs the wrong way into a copy of the package and expects lint-imports to
name the contract it breaks.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "desktop" / "tenant_events"

QT_CONTRACT = "Qt only in ui/"
UI_CONTRACT = "Nothing imports ui/"
LAYERS_CONTRACT = "Layers: ui and cli over the tenant facade over stream, auth and store over the wire"
FACADE_CONTRACT = "ui and cli reach a tenant only through the tenant facade"
UI_LAYERS_CONTRACT = "Layers inside ui: app over settings over alerts over window and tray over dialogs"
VALUES_CONTRACT = "values are the bottom layer: plain records that import nothing above them"


def _contracts() -> dict[str, dict[str, Any]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return {c["name"]: c for c in config["tool"]["importlinter"]["contracts"]}


def _top_level_modules() -> set[str]:
    names = {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    names |= {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    return {f"tenant_events.{name}" for name in names}


def _copy_tree(tmp_path: Path) -> Path:
    shutil.copytree(
        PACKAGE, tmp_path / "desktop" / "tenant_events", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_no_qt_contract_covers_every_core_module():
    sources = set(_contracts()[QT_CONTRACT]["source_modules"])
    assert sources == _top_level_modules() - {"tenant_events.ui"}


def test_nothing_imports_ui_contract_covers_every_core_module():
    # The command line starts the window (`tenant-events gui`), so it alone may import ui/.
    sources = set(_contracts()[UI_CONTRACT]["source_modules"])
    assert sources == _top_level_modules() - {
        "tenant_events.ui",
        "tenant_events.cli",
        "tenant_events.__main__",
    }


def test_the_front_ends_import_no_sign_in_stream_or_store_module():
    contract = _contracts()[FACADE_CONTRACT]
    assert set(contract["source_modules"]) == {"tenant_events.ui", "tenant_events.cli"}
    assert set(contract["forbidden_modules"]) >= {
        "tenant_events.auth",
        "tenant_events.stream",
        "tenant_events.store.writer",
        "tenant_events.store.schema",
        "tenant_events.store.alerts_table",
    }
    layers = _contracts()[LAYERS_CONTRACT]["layers"]
    assert layers.index("tenant") == layers.index("ui") + 1  # the facade sits right under the front ends


# What the front ends may take from hub/ directly: what configures a hub and the collector `relay` runs. Every
# other hub module is a viewer's or collector's inner part, reached through tenant/ only.
HUB_FOR_THE_FRONT_ENDS = {"connection", "credentials", "subjects", "provision", "relay"}


def test_every_hub_module_is_either_open_to_the_front_ends_or_forbidden_to_them():
    hub = {p.stem for p in (PACKAGE / "hub").glob("*.py") if p.stem != "__init__"}
    forbidden = {
        m.removeprefix("tenant_events.hub.")
        for m in _contracts()[FACADE_CONTRACT]["forbidden_modules"]
        if m.startswith("tenant_events.hub.")
    }
    assert forbidden == hub - HUB_FOR_THE_FRONT_ENDS


# What the front ends may take from store/ directly: a database file's readers, the alert triage, the
# readability check and the upkeep. Every other store module writes what the stream brings (or is that
# writing's inner part), reached through tenant/ only.
STORE_FOR_THE_FRONT_ENDS = {
    "reader",
    "alerts_inbox",
    "all_tenants",
    "alert_triage",
    "health",
    "reindex",
    "memory_limit",
    "tier_disk",
}


def test_every_store_module_is_either_open_to_the_front_ends_or_forbidden_to_them():
    store = {p.stem for p in (PACKAGE / "store").glob("*.py") if p.stem != "__init__"}
    forbidden = {
        m.removeprefix("tenant_events.store.")
        for m in _contracts()[FACADE_CONTRACT]["forbidden_modules"]
        if m.startswith("tenant_events.store.")
    }
    assert forbidden == store - STORE_FOR_THE_FRONT_ENDS


def test_the_values_contract_keeps_every_other_module_out_of_the_bottom_layer():
    forbidden = {
        m for m in _contracts()[VALUES_CONTRACT]["forbidden_modules"] if m.startswith("tenant_events.")
    }
    assert forbidden == _top_level_modules() - {"tenant_events.values", "tenant_events.server_text"}


def test_layers_place_every_module_but_the_simulator():
    layered: set[str] = set()
    for layer in _contracts()[LAYERS_CONTRACT]["layers"]:
        for name in layer.replace(":", "|").split("|"):
            layered.add(f"tenant_events.{name.strip()}")
    assert layered == _top_level_modules() - {"tenant_events.simulator"}


# A core module that imports ui/ also links the low parts of ui/ (which import the core) to a high one, so the
# layers inside ui/ break too.
CORE_INTO_UI = {UI_CONTRACT, LAYERS_CONTRACT, UI_LAYERS_CONTRACT}
PLANTS = [
    ("monitor.py", "import PySide6", {QT_CONTRACT}),
    ("monitor.py", "import tenant_events.ui.app.desktop_app", CORE_INTO_UI),
    ("settings/document.py", "import tenant_events.ui.tray.tray_icon", CORE_INTO_UI),
    ("store/writer.py", "import tenant_events.monitor", {LAYERS_CONTRACT}),
    ("auth/session.py", "import tenant_events.store", {LAYERS_CONTRACT}),
    ("store/reader.py", "import tenant_events.stream.engine", {LAYERS_CONTRACT}),
    ("wire/envelope.py", "import tenant_events.settings", {LAYERS_CONTRACT}),
    ("ui/window/status_line.py", "import tenant_events.cli.main", {LAYERS_CONTRACT}),
    ("tenant/link.py", "import tenant_events.ui.app.desktop_app", CORE_INTO_UI),
    ("alerts/runner.py", "import tenant_events.tenant.link", {LAYERS_CONTRACT}),
    ("ui/window/status_line.py", "import tenant_events.store.writer", {FACADE_CONTRACT}),
    ("cli/export_cmd.py", "from tenant_events.store.alerts_table import AlertLedger", {FACADE_CONTRACT}),
    ("cli/options.py", "from tenant_events.auth import pkce", {FACADE_CONTRACT}),
    ("cli/options.py", "import tenant_events.stream.engine", {FACADE_CONTRACT}),
    ("ui/window/status_line.py", "import tenant_events.hub.viewer", {FACADE_CONTRACT}),
    ("cli/options.py", "import tenant_events.hub.team_alerts", {FACADE_CONTRACT}),
    ("ui/tray/badge.py", "import tenant_events.ui.alerts.alert_book", {UI_LAYERS_CONTRACT}),
    ("ui/dialogs/sign_in_prompt.py", "import tenant_events.ui.window.main_window", {UI_LAYERS_CONTRACT}),
    ("ui/alerts/app_alerts.py", "import tenant_events.ui.app.tenant_roster", {UI_LAYERS_CONTRACT}),
    ("values/events.py", "import tenant_events.store.reader", {VALUES_CONTRACT, LAYERS_CONTRACT}),
    ("values/events.py", "import sqlite3", {VALUES_CONTRACT}),
]

# Runs in a fresh interpreter on the copy, so the copy is read and not the package this test imported: for each
# case, plant the import, let import-linter build the graph from the files (no cache) and check every contract
# in pyproject.toml, then take the plant out again. One process for all cases instead of one lint-imports each.
_LINT_SCRIPT = """
import json, sys
from pathlib import Path
from importlinter import configuration
from importlinter.application import use_cases

configuration.configure()
tree, out = Path(sys.argv[1]), Path(sys.argv[2])
options = use_cases.read_user_options(str(tree / "pyproject.toml"))
use_cases._register_contract_types(options)
results = []
for module, planted in json.loads(sys.stdin.read()):
    target = tree / "desktop" / "tenant_events" / module if module else None
    original = target.read_text(encoding="utf-8") if target else ""
    if target:
        target.write_text(original + "\\n" + planted + "  # planted\\n", encoding="utf-8")
    try:
        report = use_cases.create_report(options, cache_dir=None)
    finally:
        if target:
            target.write_text(original, encoding="utf-8")
    results.append(sorted(c.name for c, check in report.get_contracts_and_checks() if not check.kept))
out.write_text(json.dumps(results), encoding="utf-8")
"""


@pytest.fixture(scope="module")
def broken_by_plant(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], set[str]]:
    """The contracts import-linter finds broken with no plant (key ("", "")) and with each plant in PLANTS."""
    tree = _copy_tree(tmp_path_factory.mktemp("tree"))
    cases = [("", ""), *((module, planted) for module, planted, _ in PLANTS)]
    out = tree / "results.json"
    proc = subprocess.run(
        [sys.executable, "-c", _LINT_SCRIPT, str(tree), str(out)],
        input=json.dumps(cases),
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree / "desktop")},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]  # import-linter comes with the dev extras
    results = json.loads(out.read_text(encoding="utf-8"))
    return {case: set(names) for case, names in zip(cases, results, strict=True)}


def test_the_unplanted_copy_keeps_every_contract(broken_by_plant: dict[tuple[str, str], set[str]]):
    assert broken_by_plant[("", "")] == set()


@pytest.mark.parametrize(("module", "planted", "contracts"), PLANTS)
def test_a_planted_back_import_breaks_its_contract(
    broken_by_plant: dict[tuple[str, str], set[str]], module: str, planted: str, contracts: set[str]
):
    assert broken_by_plant[(module, planted)] == contracts


# Pairs of modules that reach each other. A ratchet: a new circle fails this test, and so does one that went away
# until it is struck off here. (The main window's helpers take it through Protocols of what they use.)
KNOWN_CIRCLES: set[tuple[str, str]] = set()

# Run on a tree in a fresh interpreter, so a planted copy is read and not the package this test imported.
_CIRCLES_SCRIPT = """
import json, grimp
graph = grimp.build_graph("tenant_events")
circles = set()
for module in graph.modules:
    for imported in graph.find_modules_directly_imported_by(module):
        if imported.startswith("tenant_events.") and graph.chain_exists(imported, module):
            circles.add((min(module, imported), max(module, imported)))
print(json.dumps(sorted(circles)))
"""


def _circles(tree: Path) -> set[tuple[str, str]]:
    """Pairs of modules that import each other, directly or around a loop (imports under TYPE_CHECKING count)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    proc = subprocess.run(
        [sys.executable, "-c", _CIRCLES_SCRIPT],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]  # grimp comes with lint-imports (the dev extras)
    return {(a, b) for a, b in json.loads(proc.stdout)}


def test_no_import_circles_but_the_known_ones():
    assert _circles(ROOT / "desktop") == KNOWN_CIRCLES


def test_a_planted_back_import_makes_a_circle(tmp_path: Path):
    tree = _copy_tree(tmp_path)
    target = tree / "desktop" / "tenant_events" / "ui" / "window" / "status_line.py"
    planted = "\nfrom typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    import tenant_events.ui.window.main_window\n"
    target.write_text(target.read_text(encoding="utf-8") + planted, encoding="utf-8")
    circles = _circles(tree / "desktop")
    assert ("tenant_events.ui.window.main_window", "tenant_events.ui.window.status_line") in circles
