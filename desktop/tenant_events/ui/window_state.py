"""What the main window remembers between runs in its QSettings file (issue 7 "remembers window geometry,
column layout and filters"): geometry, splitter, table header, the tray hint, the filter and saved filters."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QSettings

from tenant_events.ui.filter_bar import FilterBar

if TYPE_CHECKING:
    from tenant_events.ui.main_window import MainWindow


def restore_layout(w: MainWindow, state: QSettings) -> None:
    geometry = state.value("window/geometry")
    if isinstance(geometry, QByteArray) and not geometry.isEmpty():
        w.restoreGeometry(geometry)
    header_state = state.value("table/header")
    if isinstance(header_state, QByteArray) and not header_state.isEmpty():
        w.table.horizontalHeader().restoreState(header_state)
    splitter = state.value("window/splitter")
    if isinstance(splitter, QByteArray) and not splitter.isEmpty():
        w.splitter.restoreState(splitter)
    w.tray_hint_shown = state.value("window/tray_hint_shown") in (True, "true")


def save_layout(w: MainWindow, state: QSettings) -> None:
    state.setValue("window/geometry", w.saveGeometry())
    state.setValue("window/splitter", w.splitter.saveState())
    state.setValue("table/header", w.table.horizontalHeader().saveState())
    state.setValue("window/tray_hint_shown", w.tray_hint_shown)
    f = w.filter_bar
    state.setValue("filter/types", ",".join(sorted(f.selected_types())))
    state.setValue("filter/text", f.search.text())
    state.setValue("filter/range", f.range_box.currentIndex())
    state.setValue("filter/test", f.test_box.isChecked())
    state.setValue("filter/saved", json.dumps(f.saved))
    state.sync()


def restore_filter(f: FilterBar, state: QSettings) -> None:
    types = str(state.value("filter/types") or "")
    f.blockSignals(True)
    f.set_types({t for t in types.split(",") if t})
    f.search.setText(str(state.value("filter/text") or ""))
    rng = state.value("filter/range")
    if rng is not None and str(rng).isdigit() and int(str(rng)) < f.range_box.count() - 1:
        f.range_box.setCurrentIndex(int(str(rng)))
    f.test_box.setChecked(state.value("filter/test") not in (False, "false"))
    try:
        saved = json.loads(str(state.value("filter/saved") or "{}"))
    except ValueError:
        saved = {}
    if isinstance(saved, dict):
        f.set_saved(saved)
    f.blockSignals(False)
