"""Connect your tenant: domain, client ID, audience, name and the callback port(s), each checked as it is
typed, with the exact callback URLs to register (copyable) shown from the start.

"Connect and sign in" emits `profile_ready`; the app then checks the tenant (its discovery document is
reachable and names the same issuer, first_run.py) and calls `check_failed` (the error appears under the field
and nothing is saved) or `check_passed` (the dialog closes, the profile is saved and sign-in starts). The dialog
itself opens no connection (docs/architecture.md "Layers").
"""

from __future__ import annotations

import re

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
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
from tenant_events.settings import TenantProfile, make_profile
from tenant_events.ui.dialogs.checked_dialog import CheckedDialog
from tenant_events.ui.look.captions import whole_captions
from tenant_events.url_forms import DEFAULT_CALLBACK_PORT, loopback_callbacks

FIELDS = ("domain", "client_id", "audience", "name", "ports")


def parse_ports(text: str) -> list[int]:
    """'53682, 53683' → [53682, 53683]; ValueError naming the first bad value."""
    ports: list[int] = []
    for part in re.split(r"[,\s]+", text.strip()):
        if not part:
            continue
        if not part.isdigit() or not 1024 <= int(part) <= 65535:
            raise ValueError(f"{part!r} is not a usable port (1024–65535)")
        ports.append(int(part))
    return ports


class ConnectTenantDialog(CheckedDialog):
    profile_ready = Signal(object)  # TenantProfile, shape-checked; the app checks the tenant itself
    hub_requested = Signal()  # "Connect to a team hub instead": this dialog closes, the hub's opens

    def __init__(self, profile: TenantProfile | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Connect your tenant" if profile is None else f"Edit {profile.name}")
        self.setMinimumWidth(600)
        self.domain = QLineEdit(profile.domain if profile else "")
        self.domain.setPlaceholderText("acme.eu.auth0.com")
        self.client_id = QLineEdit(profile.client_id if profile else "")
        self.client_id.setPlaceholderText("Client ID of a Native application")
        self.audience = QLineEdit(profile.audience if profile else "")
        self.audience.setPlaceholderText("https://acme.eu.auth0.com/api/v2/ (default)")
        self.name = QLineEdit(profile.name if profile else "")
        self.name.setPlaceholderText("short name (default: from the domain)")
        ports = profile.redirect_ports if profile else [DEFAULT_CALLBACK_PORT]
        self.ports = QLineEdit(", ".join(str(p) for p in ports))
        self.ports.setPlaceholderText("empty: any free port (only for tenants that accept any loopback port)")
        self.errors: dict[str, QLabel] = {}
        form = QFormLayout()
        for key, widget, label in (
            ("domain", self.domain, "&Domain"),
            ("client_id", self.client_id, "&Client ID"),
            ("audience", self.audience, "&Audience"),
            ("name", self.name, "&Name"),
            ("ports", self.ports, "Callback &port(s)"),
        ):
            widget.setAccessibleName(label.replace("&", ""))
            widget.textChanged.connect(self.validate)
            form.addRow(label, widget)
            self.add_error_row(form, key)
        self.callbacks = QLabel()
        self.callbacks.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.callbacks.setAccessibleName("Callback URLs to register")
        self.callbacks_note = QLabel()
        self.callbacks_note.setWordWrap(True)
        self.copy_button = QPushButton("Copy callback URLs")
        self.copy_button.clicked.connect(self.copy_callbacks)
        self.status = QLabel()
        self.status.setWordWrap(True)
        cb = QHBoxLayout()
        cb.addWidget(self.callbacks, 1)
        cb.addWidget(self.copy_button, 0, Qt.AlignmentFlag.AlignTop)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.ok_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok_button.setText("Connect and sign in")
        self.buttons.accepted.connect(self._accept)
        self.buttons.rejected.connect(self.reject)
        self.hub_button = QPushButton("Connect to a team &hub instead…")
        self.hub_button.setToolTip("Read a tenant your team already follows, from its hub")
        self.hub_button.clicked.connect(self._to_hub)
        self.buttons.addButton(self.hub_button, QDialogButtonBox.ButtonRole.ResetRole)
        layout = QVBoxLayout(self)
        layout.addLayout(whole_captions(form))
        layout.addWidget(QLabel("<b>Register these Allowed Callback URLs</b> for the application:"))
        layout.addLayout(cb)
        layout.addWidget(self.callbacks_note)
        layout.addWidget(self.status)
        layout.addWidget(self.buttons)
        self.profile: TenantProfile | None = None
        self.checking = False
        self.validate()

    # -- as typed ---------------------------------------------------------------------------------------
    def validate(self) -> TenantProfile | None:
        """Check the shape of every field; the callback URLs depend on the port field alone."""
        for key in FIELDS:
            self.set_error(key, "")
        self.status.setText("")
        ports = self._show_callbacks()
        fields: dict[str, object] = {
            "domain": self.domain.text().strip(),
            "client_id": self.client_id.text().strip(),
        }
        for key, widget in (("audience", self.audience), ("name", self.name)):
            if widget.text().strip():
                fields[key] = widget.text().strip()
        self.profile = None
        if ports is not None:
            fields["redirect_ports"] = ports
            try:
                self.profile = make_profile(**fields)
            except ConfigError as exc:
                key = self._field_key(exc.field)
                typed = {
                    "domain": self.domain,
                    "client_id": self.client_id,
                    "audience": self.audience,
                    "name": self.name,
                }.get(key)
                if typed is None or typed.text().strip():  # no red text for a field not typed in yet
                    self.set_error(key, self._message(exc))
        self.ok_button.setEnabled(self.profile is not None and not self.checking)
        return self.profile

    def _show_callbacks(self) -> list[int] | None:
        try:
            ports = parse_ports(self.ports.text())
        except ValueError as exc:
            self.set_error("ports", str(exc))
            self.callbacks.setText("")
            self.callbacks_note.setText("Fix the port to see the callback URLs.")
            self.copy_button.setEnabled(False)
            return None
        urls = loopback_callbacks(ports)
        self.callbacks.setText("\n".join(urls))
        self.copy_button.setEnabled(True)
        self.callbacks_note.setText(
            "The tenant must list each of these exactly (Auth0 matches the port too)."
            if ports
            else "Without a port, only tenants that accept any loopback port (RFC 8252) will work; "
            f"Auth0 needs a fixed one, e.g. {DEFAULT_CALLBACK_PORT}."
        )
        return ports

    @staticmethod
    def _field_key(field: str) -> str:
        name = field.removeprefix("profile ").split(".", 1)[0]
        return {"auth_url": "domain", "base_url": "domain", "redirect_ports": "ports"}.get(
            name, name if name in FIELDS else "domain"
        )

    @staticmethod
    def _message(exc: ConfigError) -> str:
        text = exc.message.split(": ", 1)[1] if ": " in exc.message else exc.message
        return f"{text} — {exc.hint}" if exc.hint else text

    def copy_callbacks(self) -> None:
        QGuiApplication.clipboard().setText(self.callbacks.text())
        self.copy_button.setText("Copied")

    # -- the tenant check (done by the app) ------------------------------------------------------------
    def _accept(self) -> None:
        profile = self.validate()
        if profile is None or self.checking:
            return
        self.checking = True
        self.ok_button.setEnabled(False)
        self.status.setText(f"Checking {profile.domain}…")
        self.profile_ready.emit(profile)

    def check_failed(self, key: str, text: str) -> None:
        """The tenant check failed: say so under the field; nothing was saved, the dialog stays."""
        self.checking = False
        self.status.setText("")
        self.validate()
        self.set_error(key, text)

    def _to_hub(self) -> None:
        self.reject()
        self.hub_requested.emit()

    def check_passed(self) -> None:
        self.checking = False
        self.accept()
