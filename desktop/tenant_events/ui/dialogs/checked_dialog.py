"""A dialog whose fields are checked as the user types, each with its error line right under it (connect to a
tenant, connect to a team hub): the error rows, their text and growing the dialog to show them in one place."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QFormLayout, QHBoxLayout, QLabel, QLineEdit, QPushButton, QWidget

from tenant_events.ui.look.theme import error_style


class CheckedDialog(QDialog):
    """Keeps `errors`: field key → the hidden red line under that field, shown when it has text (a subclass sets
    `self.errors = {}` before it adds rows)."""

    errors: dict[str, QLabel]

    def add_error_row(self, form: QFormLayout, key: str) -> None:
        """The error line of field `key`, as the form's next row (call right after adding the field's row)."""
        error = QLabel()
        error.setWordWrap(True)
        error.setStyleSheet(error_style())
        error.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        error.setVisible(False)
        self.errors[key] = error
        form.addRow("", error)

    def with_choose(self, edit: QLineEdit, title: str, choose: Callable[[QWidget, str, str], str]) -> QWidget:
        """`edit` with a "Choose…" button beside it: `choose(parent, title, current text)` asks for a path (a file
        dialog; '' when none was chosen), which goes into `edit`."""
        box = QWidget()
        row = QHBoxLayout(box)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(edit, 1)
        browse = QPushButton("Choose…")
        browse.setAccessibleName(title)

        def chosen() -> None:
            if path := choose(self, title, edit.text()):
                edit.setText(path)

        browse.clicked.connect(chosen)
        row.addWidget(browse)
        box.setFocusProxy(edit)
        return box

    def checked(self, key: str, text: str, check: Callable[[str], str], *, empty_ok: bool) -> bool:
        """Whether `text` passes `check` (an empty one: `empty_ok`); else its ValueError is said under `key`."""
        if not text:
            return empty_ok
        try:
            check(text)
        except ValueError as exc:
            self.set_error(key, str(exc))
            return False
        return True

    def set_error(self, key: str, text: str) -> None:
        label = self.errors[key]
        if label.text() == text:
            return
        label.setText(text)
        label.setVisible(bool(text))
        if text:
            self._fit()

    def error_text(self, key: str) -> str:
        return self.errors[key].text()

    def _fit(self) -> None:
        """Grow to show every wrapped error line at the current width (a dialog does not grow by itself)."""
        layout = self.layout()
        if layout is None:
            return
        layout.activate()
        height = layout.totalHeightForWidth(self.width()) if layout.hasHeightForWidth() else 0
        height = max(height, layout.totalSizeHint().height())
        if height > self.height():
            self.resize(self.width(), height)
