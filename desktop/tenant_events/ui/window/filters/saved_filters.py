"""Saved filters: named when saved, renamable, deletable, applied from the "Saved" menu of the filter bar.

A saved filter is the filter bar's `state()`: types, text, test events and the time range — a relative range
("last hour") stays relative, a custom one keeps its from/to. They live in the window state file (window.ini,
`filter/saved`), not the settings (CONTRIBUTING.md "Style").
"""

from __future__ import annotations

import json
from functools import partial
from typing import Any

from PySide6.QtCore import QObject, QSettings, Signal
from PySide6.QtWidgets import QWidget

from tenant_events.ui.dialogs.name_dialog import NameDialog
from tenant_events.ui.window.filters.filter_bar import FilterBar


class SavedFilters(QObject):
    changed = Signal()

    def __init__(self, bar: FilterBar, parent: QWidget) -> None:
        super().__init__(parent)
        self.bar, self.parent_widget = bar, parent
        self.saved: dict[str, dict[str, Any]] = {}
        self.dialog: NameDialog | None = None
        bar.saved_menu.aboutToShow.connect(self.rebuild_menu)
        self.rebuild_menu()

    # -- the operations ------------------------------------------------------------------------------------
    def save_as(self, name: str) -> str:
        self.saved[name] = self.bar.state()
        self._changed()
        return name

    def apply(self, name: str) -> None:
        state = self.saved.get(name)
        if state is not None:
            self.bar.apply_state(state)

    def rename(self, old: str, new: str) -> None:
        if old in self.saved and new and new not in self.saved:
            self.saved = {(new if k == old else k): v for k, v in self.saved.items()}  # keeps the order
            self._changed()

    def delete(self, name: str) -> None:
        if self.saved.pop(name, None) is not None:
            self._changed()

    def _changed(self) -> None:
        self.rebuild_menu()
        self.changed.emit()

    def problem(self, name: str, renaming: str | None = None) -> str:
        if not name:
            return "Type a name for this filter."
        if name in self.saved and name != renaming:
            return f"“{name}” is taken: pick another name, or delete that filter first."
        return ""

    # -- asking for names ----------------------------------------------------------------------------------
    def ask_save(self) -> NameDialog:
        dialog = NameDialog(
            "Save filter", "Name of this filter:", self.bar.describe(), self.problem, self.parent_widget
        )
        dialog.name_chosen.connect(self.save_as)
        return self._open(dialog)

    def ask_rename(self, old: str) -> NameDialog:
        dialog = NameDialog(
            "Rename filter",
            f"New name for “{old}”:",
            old,
            partial(self._rename_problem, old),
            self.parent_widget,
        )
        dialog.name_chosen.connect(lambda new: self.rename(old, new))
        return self._open(dialog)

    def _rename_problem(self, old: str, name: str) -> str:
        return self.problem(name, renaming=old) or ("" if name != old else "That is its name already.")

    def _open(self, dialog: NameDialog) -> NameDialog:
        dialog.finished.connect(lambda _r: dialog.deleteLater())
        self.dialog = dialog
        dialog.open()
        return dialog

    # -- the menu ------------------------------------------------------------------------------------------
    def rebuild_menu(self) -> None:
        m = self.bar.saved_menu
        m.clear()
        m.addAction("Save this filter…", self.ask_save)
        if not self.saved:
            empty = m.addAction("No saved filters yet")
            empty.setEnabled(False)
            return
        m.addSection("Apply")
        for name in self.saved:
            act = m.addAction(name, partial(self.apply, name))
            act.setToolTip(describe_state(self.saved[name]))
        m.addSeparator()
        rename = m.addMenu("Rename")
        delete = m.addMenu("Delete")
        for name in self.saved:
            rename.addAction(name, partial(self.ask_rename, name))
            delete.addAction(name, partial(self.delete, name))

    # -- persistence ---------------------------------------------------------------------------------------
    def save_state(self, state: QSettings) -> None:
        state.setValue("filter/saved", json.dumps(self.saved))

    def restore_state(self, state: QSettings) -> None:
        try:
            saved = json.loads(str(state.value("filter/saved") or "{}"))
        except ValueError:
            saved = {}
        if isinstance(saved, dict):
            self.saved = {str(k): v for k, v in saved.items() if isinstance(v, dict)}
        self.rebuild_menu()


def describe_state(state: dict[str, Any]) -> str:
    """A tooltip: what the saved filter holds."""
    parts = []
    types = state.get("types") or []
    parts.append(", ".join(types) if types else "all types")
    if state.get("text"):
        parts.append(f"text “{state['text']}”")
    if state.get("since") and state.get("until"):
        parts.append(f"from {state['since']} to {state['until']}")
    if state.get("test") is False:
        parts.append("no test events")
    return " · ".join(parts)
