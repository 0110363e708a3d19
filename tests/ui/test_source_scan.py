"""PySide6 checks every module imported after it for the word "PySide6"; the app's check gives the same answers
and leaves no source lines in memory (linecache), where PySide6's own kept every file's text for good."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PROBE = """
import json, linecache, sys
sys.path.insert(0, sys.argv[1])
import tenant_events.ui  # the app's first ui import
import with_qt, without_qt
feature = sys.modules["shibokensupport.feature"]
print(json.dumps({
    "kept": [f for f in linecache.cache if f.startswith(sys.argv[1])],
    "kept_total": len(linecache.cache),
    "with_qt": feature.pyside_feature_dict.get("with_qt"),
    "without_qt": feature.pyside_feature_dict.get("without_qt"),
}))
"""


def test_imported_modules_leave_no_source_in_memory_and_keep_their_feature_flags(tmp_path: Path) -> None:
    (tmp_path / "with_qt.py").write_text(
        "from PySide6.QtCore import QObject\nVALUE = 1\n" + "# padding\n" * 500
    )
    (tmp_path / "without_qt.py").write_text("VALUE = 2\n" + "# padding\n" * 500)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["kept"] == []
    assert seen["kept_total"] <= 5  # what a library's own traceback.extract_stack reads is all that is left
    assert (seen["with_qt"], seen["without_qt"]) == (0, -1)  # as PySide6's own check says: uses it, ignore it


def test_the_check_answers_as_pysides_own(tmp_path: Path) -> None:
    import inspect
    import types

    from tenant_events.ui.source_scan import uses_pyside

    def theirs(module: types.ModuleType) -> bool:  # shibokensupport/feature.py's _mod_uses_pyside
        try:
            return "PySide6" in inspect.getsource(module)
        except (TypeError, OSError, SyntaxError):
            return False

    import json as stdlib_module

    import tenant_events.ui.app.launch as qt_module
    import tenant_events.wire as qt_free_module

    for module in (stdlib_module, qt_module, qt_free_module, sys, types.ModuleType("made_here")):
        assert uses_pyside(module) == theirs(module), module
    assert uses_pyside(qt_module) and not uses_pyside(qt_free_module)
