"""Settings → Alert rules → "Import Sigma rules…": a Sigma file or folder, read when "Import" is pressed.

    Sigma rules  [/path/to/rules.yml              ] [File…] [Folder…]
                 ⚠ rules.yml: Sigma rule 'X': data.object.email|base64: the modifier base64 is not supported …
    Rules for product auth0, service events; …                                          [Import] [Cancel]

All or nothing, as `tenant-events rules import`: when one rule cannot be expressed, the line naming the file,
the rule and the field or modifier appears under the path and nothing is imported; the dialog stays open.
On success `imported` holds the result and the dialog is accepted; the rules page takes the rules in (saved
with the rest of the settings).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from tenant_events.alert_settings import AlertSettings
from tenant_events.alerts.sigma_rules import Imported, SigmaRefused, merge_imported, read_sigma
from tenant_events.ui.dialogs.checked_dialog import CheckedDialog
from tenant_events.ui.look.captions import whole_captions

HELP = (
    "Sigma detection and correlation rules for <b>product: auth0, service: events</b>. Fields are the "
    "event's dotted JSON paths (<tt>type</tt>, <tt>data.object.role.name</tt>); the modifiers contains, "
    "startswith, endswith, re, cidr, exists, all and cased, and the correlations event_count, value_count, "
    "temporal and temporal_ordered with group-by. A rule that cannot be expressed stops the whole import."
)


class SigmaImportDialog(CheckedDialog):
    def __init__(self, alerts: AlertSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Import Sigma rules")
        self.setMinimumWidth(640)
        self.alerts = alerts
        self.imported: Imported | None = None
        self.errors = {}
        self.path = QLineEdit()
        self.path.setPlaceholderText("a .yml file, or a folder of them")
        self.path.setAccessibleName("Sigma file or folder")
        self.path.textChanged.connect(lambda _t: self.set_error("path", ""))
        self.file_button = QPushButton("&File…")
        self.file_button.clicked.connect(self._pick_file)
        self.folder_button = QPushButton("F&older…")
        self.folder_button.clicked.connect(self._pick_folder)
        row = QHBoxLayout()
        row.addWidget(self.path, 1)
        row.addWidget(self.file_button)
        row.addWidget(self.folder_button)
        form = QFormLayout()
        label = QLabel("&Sigma rules")
        label.setBuddy(self.path)
        form.addRow(label, row)
        self.add_error_row(form, "path")
        help_text = QLabel(HELP)
        help_text.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.import_button = self.buttons.addButton("&Import", QDialogButtonBox.ButtonRole.AcceptRole)
        self.import_button.setDefault(True)
        self.buttons.accepted.connect(self.try_import)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(whole_captions(form))
        layout.addWidget(help_text)
        layout.addStretch(1)
        layout.addWidget(self.buttons)

    def _pick_file(self) -> None:
        name, _ = QFileDialog.getOpenFileName(
            self, "Sigma file", self.path.text(), "Sigma rules (*.yml *.yaml)"
        )
        if name:
            self.path.setText(name)

    def _pick_folder(self) -> None:
        name = QFileDialog.getExistingDirectory(self, "Folder of Sigma files", self.path.text())
        if name:
            self.path.setText(name)

    def try_import(self) -> None:
        """Read and check the rules; accept with `imported` set, or show why nothing was imported."""
        text = self.path.text().strip()
        if not text:
            self.set_error("path", "Choose a Sigma file or a folder of them.")
            return
        try:
            found = read_sigma(Path(text).expanduser(), lists=self.alerts.lists)
            self.imported = merge_imported(self.alerts, found)
        except SigmaRefused as exc:
            self.imported = None
            self.set_error("path", str(exc))
            return
        self.accept()
