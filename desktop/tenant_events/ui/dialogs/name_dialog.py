"""Ask for a name (saving or renaming a filter): the problem with a name shows under the field, OK waits for a
good one. Opened with `open()` and answered through `name_chosen`, never a blocking `exec()` (CONTRIBUTING.md "Style")."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QLineEdit, QVBoxLayout, QWidget

MAX_NAME = 80


class NameDialog(QDialog):
    name_chosen = Signal(str)

    def __init__(
        self,
        title: str,
        prompt: str,
        initial: str,
        problem: Callable[[str], str],
        parent: QWidget | None = None,
    ) -> None:
        """`problem(name)` is '' for a good name, else one line saying what is wrong and what to do."""
        super().__init__(parent)
        self.setWindowTitle(title)
        self._problem = problem
        self.label = QLabel(prompt)
        self.edit = QLineEdit(initial)
        self.edit.setAccessibleName(prompt.rstrip(":"))
        self.edit.setMaxLength(MAX_NAME)
        self.edit.selectAll()
        self.label.setBuddy(self.edit)
        self.error = QLabel()
        self.error.setAccessibleName("Name problem")
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self._accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.label)
        layout.addWidget(self.edit)
        layout.addWidget(self.error)
        layout.addWidget(self.buttons)
        self.edit.textChanged.connect(lambda _t: self._check())
        self._check()

    def _check(self) -> bool:
        text = self.edit.text().strip()
        problem = self._problem(text)
        self.error.setText(problem)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(not problem)
        return not problem

    def _accept(self) -> None:
        if self._check():
            self.name_chosen.emit(self.edit.text().strip())
            self.accept()
