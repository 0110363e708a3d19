"""Connect to a team hub: the hub's server URL(s), the tenant's name there, a name here, and how to sign in.

Every field is checked as it is typed (settings/hubs.py's rules), errors appear under their field. "Check" emits
`check_requested` and "Add" emits `add_requested` with a `HubRequest`; the app connects to the hub
(ui/app/hub_connect.py) and answers with `check_passed` / `check_failed`, then `added`. The dialog opens no
connection and reads no file (docs/architecture.md "Layers"): a key or creds file is passed on as a path; the secret typed here
goes only to the keyring.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from pydantic import ValidationError
from PySide6.QtCore import Qt, Signal, SignalInstance
from PySide6.QtWidgets import (
    QComboBox,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from tenant_events.hub.subjects import check_hub_tenant
from tenant_events.settings.hubs import HubProfile, split_hub_urls
from tenant_events.ui.dialogs.checked_dialog import CheckedDialog
from tenant_events.ui.look.captions import whole_captions

FIELDS: Final = ("urls", "hub_tenant", "name", "auth", "user", "secret", "key_file", "ca_file")
# (auth kind, shown in the menu); the secret is typed for password/token, read from a file for nkey/creds
AUTH_KINDS: Final = (
    ("none", "No sign-in (a hub on this computer)"),
    ("password", "User and password"),
    ("token", "Token"),
    ("nkey", "NKey seed file"),
    ("creds", "Creds file (.creds)"),
)
FILE_KINDS: Final = ("nkey", "creds")


@dataclass(frozen=True)
class HubRequest:
    """A hub profile whose fields are shaped right, and where its secret comes from."""

    profile: HubProfile
    secret: str = field(default="", repr=False)  # the typed password or token
    key_file: str = ""  # the NKey seed or creds file, read by the app

    @property
    def key(self) -> tuple[object, ...]:
        """What the hub check depends on: a passed check holds as long as this is unchanged."""
        return (self.profile, self.secret, self.key_file)


def _local_name(text: str) -> str:
    """The name here, said as the tenant dialog says it (it names no hub's tenant)."""
    try:
        return check_hub_tenant(text)
    except ValueError:
        raise ValueError(f"{text!r} must be 1–64 lowercase letters, digits or dashes") from None


class ConnectHubDialog(CheckedDialog):
    check_requested = Signal(object)  # HubRequest
    add_requested = Signal(object)  # HubRequest

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Connect to a team hub")
        self.setMinimumWidth(620)
        self.urls = QLineEdit()
        self.urls.setPlaceholderText("tls://hub.example.com:4222 (a cluster: several, comma-separated)")
        self.hub_tenant = QLineEdit()
        self.hub_tenant.setPlaceholderText("the name the hub's relay publishes it under, e.g. acme")
        self.name = QLineEdit()
        self.name.setPlaceholderText("name in this app (default: the same)")
        self.auth = QComboBox()
        for kind, text in AUTH_KINDS:
            self.auth.addItem(text, kind)
        self.user = QLineEdit()
        self.secret = QLineEdit()
        self.secret.setEchoMode(QLineEdit.EchoMode.Password)
        self.key_file = QLineEdit()
        self.key_file.setPlaceholderText("the file the hub's administrator gave you")
        self.ca_file = QLineEdit()
        self.ca_file.setPlaceholderText("optional: PEM of the CA that signed the hub's certificate")
        self.errors: dict[str, QLabel] = {}
        self.rows: dict[str, tuple[QLabel, QWidget]] = {}
        form = QFormLayout()
        for key, widget, label in (
            ("urls", self.urls, "Hub &URL(s)"),
            ("hub_tenant", self.hub_tenant, "&Tenant on the hub"),
            ("name", self.name, "&Name here"),
            ("auth", self.auth, "&Sign in with"),
            ("user", self.user, "U&ser"),
            ("secret", self.secret, "&Password"),
            ("key_file", self._with_browse(self.key_file, "Choose the NKey seed or creds file"), "&Key file"),
            ("ca_file", self._with_browse(self.ca_file, "Choose the hub's CA certificate"), "&CA file"),
        ):
            caption = QLabel(label)
            caption.setBuddy(widget.focusProxy() or widget)
            form.addRow(caption, widget)
            self.rows[key] = (caption, widget)
            self.add_error_row(form, key)
        for edit in (
            self.urls,
            self.hub_tenant,
            self.name,
            self.user,
            self.secret,
            self.key_file,
            self.ca_file,
        ):
            edit.textChanged.connect(self.validate)
        self.auth.currentIndexChanged.connect(self._auth_changed)
        self.auth.setAccessibleName("Sign in with")
        self.found = QLabel()
        self.found.setWordWrap(True)
        self.found.setAccessibleName("Hub check result")
        self.found.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.check_button = QPushButton("C&heck")
        self.check_button.setToolTip("Connect to the hub and look for the tenant's events")
        self.add_button = QPushButton("&Add")
        self.add_button.setDefault(True)
        self.buttons.addButton(self.check_button, QDialogButtonBox.ButtonRole.HelpRole)  # on the left
        self.buttons.addButton(self.add_button, QDialogButtonBox.ButtonRole.AcceptRole)
        self.check_button.clicked.connect(lambda: self._request(self.check_requested))
        self.add_button.clicked.connect(lambda: self._request(self.add_requested))
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(
            QLabel("Read a tenant's events from the team's hub instead of from the tenant itself.")
        )
        layout.addLayout(whole_captions(form))
        layout.addWidget(self.found)
        layout.addWidget(self.buttons)
        self.request: HubRequest | None = None
        self.busy = False
        self._auth_changed()

    def _with_browse(self, edit: QLineEdit, title: str) -> QWidget:
        return self.with_choose(
            edit, title, lambda parent, t, _now: QFileDialog.getOpenFileName(parent, t)[0]
        )

    @property
    def auth_kind(self) -> str:
        return str(self.auth.currentData())

    def _auth_changed(self) -> None:
        kind = self.auth_kind
        shown = {
            "user": kind == "password",
            "secret": kind in ("password", "token"),
            "key_file": kind in FILE_KINDS,
        }
        for key, visible in shown.items():
            caption, widget = self.rows[key]
            caption.setVisible(visible)
            widget.setVisible(visible)
        self.rows["secret"][0].setText("&Token" if kind == "token" else "&Password")
        self.validate()

    # -- as typed ---------------------------------------------------------------------------------------
    def validate(self) -> HubRequest | None:
        """Check every field's shape; a field not typed in yet gets no red text."""
        for key in FIELDS:
            self.set_error(key, "")
        self.found.setText("")
        self.request = None
        urls: list[str] = []
        try:
            urls = split_hub_urls(self.urls.text())
        except ValueError as exc:
            if self.urls.text().strip():
                self.set_error("urls", str(exc))
        hub_tenant = self.hub_tenant.text().strip()
        ok = bool(urls) and self._check("hub_tenant", self.hub_tenant, check_hub_tenant)
        name = self.name.text().strip() or hub_tenant
        ok = self._check("name", self.name, _local_name) and ok
        kind = self.auth_kind
        if kind in ("password", "token") and not self.secret.text().strip():
            ok = False
        if kind in FILE_KINDS and not self.key_file.text().strip():
            ok = False
        if ok:
            fields = {
                "name": name,
                "hub_urls": urls,
                "hub_tenant": hub_tenant,
                "auth": kind,
                "user": self.user.text().strip(),
                "ca_file": self.ca_file.text().strip(),
            }
            try:
                profile = HubProfile.model_validate(fields)
            except ValidationError as exc:
                first = exc.errors()[0]
                message = str(first.get("msg", "")).removeprefix("Value error, ")
                key = str(first["loc"][0]) if first.get("loc") else "user"
                if ": " in message and key not in FIELDS:
                    key, message = message.split(": ", 1)
                if self.user.text().strip() or key != "user":
                    self.set_error(key if key in FIELDS else "urls", message)
            else:
                secret = self.secret.text() if kind in ("password", "token") else ""
                key_file = self.key_file.text().strip() if kind in FILE_KINDS else ""
                self.request = HubRequest(profile, secret, key_file)
        self._enable()
        return self.request

    def _check(self, key: str, edit: QLineEdit, check: Callable[[str], str]) -> bool:
        # (the name here may stay empty: it defaults to the hub's name)
        return self.checked(key, edit.text().strip(), check, empty_ok=key == "name")

    def _enable(self) -> None:
        ready = self.request is not None and not self.busy
        self.check_button.setEnabled(ready)
        self.add_button.setEnabled(ready)

    # -- the hub check (done by the app) ----------------------------------------------------------------
    def _request(self, signal: SignalInstance) -> None:
        request = self.validate()
        if request is None or self.busy:
            return
        self.busy = True
        self._enable()
        self.found.setText(f"Connecting to {', '.join(request.profile.hub_urls)}…")
        signal.emit(request)

    def check_passed(self, text: str) -> None:
        self.busy = False
        self._enable()
        self.found.setText(text)
        self._fit()

    def check_failed(self, key: str, text: str) -> None:
        """Say what failed under the field that can fix it; nothing was saved, the dialog stays."""
        self.busy = False
        self.validate()
        self.set_error(key, text)

    def added(self) -> None:
        self.busy = False
        self.accept()
