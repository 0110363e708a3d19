"""Connect your tenant: domain, client ID and audience, checked by the settings model, with the exact
callback URLs to register in the tenant's dashboard (copyable)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from tenant_events.errors import ConfigError
from tenant_events.settings import TenantProfile, callback_urls, make_profile


class ConnectTenantDialog(QDialog):
    profile_ready = Signal(object)  # TenantProfile

    def __init__(self, profile: TenantProfile | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Connect your tenant" if profile is None else f"Edit {profile.name}")
        self.setMinimumWidth(560)
        self.domain = QLineEdit(profile.domain if profile else "")
        self.domain.setPlaceholderText("acme.eu.auth0.com")
        self.client_id = QLineEdit(profile.client_id if profile else "")
        self.client_id.setPlaceholderText("Client ID of a Native application")
        self.audience = QLineEdit(profile.audience if profile else "")
        self.audience.setPlaceholderText("https://acme.eu.auth0.com/api/v2/ (default)")
        self.name = QLineEdit(profile.name if profile else "")
        self.name.setPlaceholderText("short name (default: from the domain)")
        for w, label in (
            (self.domain, "Domain"),
            (self.client_id, "Client ID"),
            (self.audience, "Audience"),
            (self.name, "Name"),
        ):
            w.setAccessibleName(label)
            w.textChanged.connect(self.validate)
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #cf222e")
        self.callbacks = QLabel()
        self.callbacks.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.copy_button = QPushButton("Copy callback URLs")
        self.copy_button.clicked.connect(self.copy_callbacks)
        form = QFormLayout()
        form.addRow("&Domain", self.domain)
        form.addRow("&Client ID", self.client_id)
        form.addRow("&Audience", self.audience)
        form.addRow("&Name", self.name)
        cb = QHBoxLayout()
        cb.addWidget(self.callbacks, 1)
        cb.addWidget(self.copy_button)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Connect and sign in")
        self.buttons.accepted.connect(self._accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(QLabel("Register these Allowed Callback URLs for the application:"))
        layout.addLayout(cb)
        layout.addWidget(self.error)
        layout.addWidget(self.buttons)
        self.profile: TenantProfile | None = None
        self.validate()

    def validate(self) -> TenantProfile | None:
        fields = {"domain": self.domain.text().strip(), "client_id": self.client_id.text().strip()}
        if self.audience.text().strip():
            fields["audience"] = self.audience.text().strip()
        if self.name.text().strip():
            fields["name"] = self.name.text().strip()
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        try:
            profile = make_profile(**fields)
        except ConfigError as exc:
            self.error.setText(str(exc) if (fields["domain"] or fields["client_id"]) else "")
            self.callbacks.setText("")
            ok.setEnabled(False)
            self.profile = None
            return None
        self.error.setText("")
        self.callbacks.setText("\n".join(callback_urls(profile)))
        ok.setEnabled(True)
        self.profile = profile
        return profile

    def copy_callbacks(self) -> None:
        QGuiApplication.clipboard().setText(self.callbacks.text())

    def _accept(self) -> None:
        profile = self.validate()
        if profile is not None:
            self.profile_ready.emit(profile)
            self.accept()
