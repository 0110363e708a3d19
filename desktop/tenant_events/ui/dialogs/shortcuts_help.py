"""The keyboard cheat sheet (F1 or ?): every window action that has a shortcut, read from the actions
themselves so the sheet cannot drift from what the keys do, plus the keys the table and menus handle."""

from __future__ import annotations

import html
from collections.abc import Iterable

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout, QWidget

EXTRA = (
    ("Move between events", "↑ / ↓, Page Up / Page Down"),
    ("Event actions, from the keyboard", "the Menu key on a row"),
    ("Zoom the histogram back out", "Escape or right-click on it"),
    ("Back / forward between timelines", "Alt+Left / Alt+Right"),
    ("Open a menu", "Alt + its underlined letter"),
    ("Next / previous control", "Tab / Shift+Tab"),
)


def rows(actions: Iterable[QAction]) -> list[tuple[str, str]]:
    """(what, keys) for each action with a shortcut, in the order given."""
    out = []
    for act in actions:
        keys = [
            k.toString(QKeySequence.SequenceFormat.NativeText) for k in act.shortcuts() if not k.isEmpty()
        ]
        if keys:
            out.append((act.text().replace("&", "").rstrip("…").strip(), " or ".join(keys)))
    return out


class ShortcutsHelp(QDialog):
    def __init__(self, actions: Iterable[QAction], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        self.setAccessibleName("Keyboard shortcuts")
        self.entries = rows(actions) + list(EXTRA)
        self.view = QTextBrowser()
        self.view.setAccessibleName("Keyboard shortcuts list")
        body = "".join(
            f"<tr><td style='padding:2px 16px 2px 0'>{html.escape(what)}</td>"
            f"<td style='padding:2px 0'><b>{html.escape(keys)}</b></td></tr>"
            for what, keys in self.entries
        )
        self.view.setHtml(f"<table>{body}</table>")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.view)
        layout.addWidget(buttons)
        self.resize(560, 580)  # every line without scrolling
