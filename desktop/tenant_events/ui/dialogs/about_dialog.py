"""Help ▸ About Tenant Events: which version this is, where it keeps its data and its logs (each a button that
opens the folder), and the licences it ships under — what a bug report or a support question needs first.

    Tenant Events 0.1.0
    Follows an identity tenant's event stream, raises alerts from rules, shares a tenant with a team.
    Data      /home/ana/.local/share/tenant-events        [Open]
    Logs      /home/ana/.local/state/tenant-events/log    [Open]
    Settings  /home/ana/.config/tenant-events/settings.json
    Licence   MIT; Qt for Python (PySide6) under the LGPL v3; Python 3.11.7, Qt 6.11.3
"""

from __future__ import annotations

import platform
from pathlib import Path
from typing import Final

import PySide6
from PySide6.QtCore import Qt, QUrl, qVersion
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from tenant_events import __version__
from tenant_events.paths import AppPaths
from tenant_events.ui.look.captions import whole_captions

WHAT: Final = (
    "Follows an identity tenant's event stream into a local store, raises alerts from rules and shares a "
    "tenant with a team."
)


def licence_text() -> str:
    return (
        f"Tenant Events is released under the MIT licence. It is built with Qt for Python (PySide6 "
        f"{PySide6.__version__}, Qt {qVersion()}), used under the GNU LGPL v3, on Python {platform.python_version()}."
    )


class AboutDialog(QDialog):
    def __init__(self, paths: AppPaths, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("About Tenant Events")
        self.paths = paths
        title = QLabel(f"<b>Tenant Events {__version__}</b>")
        title.setAccessibleName("Version")
        what = QLabel(WHAT)
        what.setWordWrap(True)
        form = QFormLayout()
        self.folders: dict[str, QLabel] = {}
        for label, path, openable in (
            ("Data", paths.data_dir, True),
            ("Logs", paths.log_dir, True),
            ("Settings", paths.settings_file, False),
        ):
            form.addRow(label, self._path_row(label, path, openable))
        licence = QLabel(licence_text())
        licence.setWordWrap(True)
        licence.setAccessibleName("Licence")
        form.addRow("Licence", licence)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(title)
        layout.addWidget(what)
        layout.addLayout(whole_captions(form))
        layout.addWidget(buttons)
        self.resize(640, self.sizeHint().height())

    def _path_row(self, label: str, path: Path, openable: bool) -> QWidget:
        row = QWidget()
        box = QHBoxLayout(row)
        box.setContentsMargins(0, 0, 0, 0)
        shown = QLabel(str(path))
        shown.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)  # to paste in a report
        shown.setAccessibleName(f"{label} folder" if openable else f"{label} file")
        self.folders[label] = shown
        box.addWidget(shown, 1)
        if openable:
            button = QPushButton("Open")
            button.setAccessibleName(f"Open the {label.lower()} folder")
            button.setAutoDefault(False)
            button.clicked.connect(lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(path))))
            box.addWidget(button)
        return row


def open_about(paths: AppPaths, parent: QWidget) -> AboutDialog:
    """Open it over `parent` (not modal; it goes when closed)."""
    dialog = AboutDialog(paths, parent)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.open()
    return dialog
