"""What the main window remembers between runs in its QSettings file ("remembers window geometry,
column layout and filters"): geometry, splitter, the columns (columns.py), the tray hint, the filter and the
saved filters (saved_filters.py). Window state, not settings (CONTRIBUTING.md "Style")."""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import QByteArray, QSettings
from PySide6.QtWidgets import QSplitter

from tenant_events.ui.window.filters.filter_bar import CUSTOM, FilterBar
from tenant_events.ui.window.filters.saved_filters import SavedFilters
from tenant_events.ui.window.table.columns import ColumnLayout
from tenant_events.view.time_range import from_iso, to_iso


class RememberedWindow(Protocol):
    """The parts of the main window whose state is kept (the window passes itself; no import back to it)."""

    columns: ColumnLayout
    splitter: QSplitter
    tray_hint_shown: bool
    filter_bar: FilterBar
    saved_filters: SavedFilters

    def restoreGeometry(self, geometry: QByteArray | bytes | bytearray | memoryview, /) -> bool: ...

    def saveGeometry(self, /) -> QByteArray: ...


def restore_layout(w: RememberedWindow, state: QSettings) -> None:
    geometry = state.value("window/geometry")
    if isinstance(geometry, QByteArray) and not geometry.isEmpty():
        w.restoreGeometry(geometry)
    w.columns.restore()
    splitter = state.value("window/splitter")
    if isinstance(splitter, QByteArray) and not splitter.isEmpty():
        w.splitter.restoreState(splitter)
    w.tray_hint_shown = state.value("window/tray_hint_shown") in (True, "true")


def save_layout(w: RememberedWindow, state: QSettings) -> None:
    state.setValue("window/geometry", w.saveGeometry())
    state.setValue("window/splitter", w.splitter.saveState())
    w.columns.save()
    state.setValue("window/tray_hint_shown", w.tray_hint_shown)
    f = w.filter_bar
    state.setValue("filter/types", ",".join(sorted(f.selected_types())))
    state.setValue("filter/text", f.search.text())
    state.setValue("filter/range", f.range_box.currentIndex())
    custom = f.custom_range if f.range_box.currentIndex() == CUSTOM else None
    state.setValue("filter/since", to_iso(custom[0]) if custom else "")
    state.setValue("filter/until", to_iso(custom[1]) if custom else "")
    state.setValue("filter/test", f.test_box.isChecked())
    w.saved_filters.save_state(state)
    state.sync()


def restore_filter(w: RememberedWindow, state: QSettings) -> None:
    f: FilterBar = w.filter_bar
    types = str(state.value("filter/types") or "")
    f.blockSignals(True)
    f.set_types({t for t in types.split(",") if t})
    f.search.setText(str(state.value("filter/text") or ""))
    rng = state.value("filter/range")
    since, until = from_iso(state.value("filter/since")), from_iso(state.value("filter/until"))
    if rng is not None and str(rng).isdigit():
        index = int(str(rng))
        if index == CUSTOM and since is not None and until is not None and until > since:
            f.set_custom_range(since, until)
        elif index < CUSTOM:
            f.range_box.setCurrentIndex(index)
    f.test_box.setChecked(state.value("filter/test") not in (False, "false"))
    f.blockSignals(False)
    w.saved_filters.restore_state(state)
