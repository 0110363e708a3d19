"""Where a hub tenant's team archive is (docs/archive.md "Team archive"): the catalog, the shared folder or the
s3:// location its files are in (with, for object storage, its endpoint, region, URL style and the access key id
and secret), and the catalog's password. Opened from Settings ▸ Tenants ▸ "Team archive…" for a hub tenant.

Every field is checked as it is typed (settings/team_archive.py's rules and the hub profile's), its error right
under it. Save emits `save_requested` with a `TeamArchiveChoice`; the app keeps the password and the keys in the
keyring, saves the profile and reads the tenant again with the archive, then answers `saved()` or
`failed(field, text)`. The dialog opens no connection and writes no file. Catalog and place empty: none.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from pydantic import ValidationError
from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from tenant_events.settings.hubs import HubProfile
from tenant_events.settings.team_archive import (
    URL_STYLES,
    check_catalog,
    check_data_path,
    check_endpoint,
    check_key_id,
    check_region,
)
from tenant_events.ui.dialogs.checked_dialog import CheckedDialog
from tenant_events.ui.look.captions import whole_captions

FIELDS: Final = (
    "team_archive",
    "team_archive_path",
    "team_archive_endpoint",
    "team_archive_region",
    "team_archive_url_style",
    "key_id",
    "secret",
    "password",
)
_STORAGE: Final = FIELDS[2:7]  # for an s3:// location only
_CHOOSE: Final = "Choose the team archive's folder"


@dataclass(frozen=True)
class TeamArchiveChoice:
    """The hub profile with its team archive as chosen, the catalog's password and the object storage's keys if
    they were typed."""

    profile: HubProfile
    password: str = field(default="", repr=False)
    keys: tuple[str, str] | None = field(default=None, repr=False)


class TeamArchiveDialog(CheckedDialog):
    save_requested = Signal(object)  # TeamArchiveChoice

    def __init__(self, profile: HubProfile, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.profile = profile
        self.setWindowTitle(f"Team archive of {profile.name}")
        self.setMinimumWidth(620)
        self.catalog = QLineEdit(profile.team_archive)
        self.catalog.setPlaceholderText("postgres:dbname=events host=db.example.org user=viewer")
        self.folder = QLineEdit(profile.team_archive_path)
        self.folder.setPlaceholderText(
            "a folder every computer mounts (/mnt/team/events) or s3://bucket/prefix"
        )
        self.endpoint = QLineEdit(profile.team_archive_endpoint)
        self.endpoint.setPlaceholderText("empty for AWS; MinIO, Ceph, Garage, R2…: https://host:port")
        self.region = QLineEdit(profile.team_archive_region)
        self.region.setPlaceholderText("us-east-1 (auto for R2)")
        self.url_style = QComboBox()
        self.url_style.addItem("automatic (path with an endpoint, vhost on AWS)", "")
        for style in URL_STYLES:
            self.url_style.addItem(style, style)
        self.url_style.setCurrentIndex(max(0, self.url_style.findData(profile.team_archive_url_style)))
        self.key_id = QLineEdit()
        self.key_id.setPlaceholderText("optional: kept in the keyring (empty: the one kept, if any)")
        self.secret = QLineEdit()
        self.secret.setEchoMode(QLineEdit.EchoMode.Password)
        self.secret.setPlaceholderText("the key's secret, kept in the keyring with it")
        self.password = QLineEdit()
        self.password.setEchoMode(QLineEdit.EchoMode.Password)
        self.password.setPlaceholderText("optional: kept in the keyring (empty: the one kept, if any)")
        self.errors: dict[str, QLabel] = {}
        form = QFormLayout()
        for key, widget, label in (
            ("team_archive", self.catalog, "&Catalog"),
            (
                "team_archive_path",
                self.with_choose(self.folder, _CHOOSE, QFileDialog.getExistingDirectory),
                "&Files in",
            ),
            ("team_archive_endpoint", self.endpoint, "&Endpoint"),
            ("team_archive_region", self.region, "&Region"),
            ("team_archive_url_style", self.url_style, "&URL style"),
            ("key_id", self.key_id, "Access &key id"),
            ("secret", self.secret, "&Secret access key"),
            ("password", self.password, "Catalog &password"),
        ):
            caption = QLabel(label)
            caption.setBuddy(widget.focusProxy() or widget)
            form.addRow(caption, widget)
            self.add_error_row(form, key)
        for edit in (
            self.catalog,
            self.folder,
            self.endpoint,
            self.region,
            self.key_id,
            self.secret,
            self.password,
        ):
            edit.textChanged.connect(self.validate)
        self.url_style.currentIndexChanged.connect(self.validate)
        intro = QLabel(
            "Read the team's shared history with this tenant's events: a DuckLake catalog in PostgreSQL and the "
            "shared folder or S3-compatible bucket its files are in, which the relay holding the hub's lease "
            "writes. Leave the catalog and the place empty for none."
        )
        intro.setWordWrap(True)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        self.save_button = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        self.buttons.accepted.connect(self._save)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(whole_captions(form))
        layout.addWidget(self.buttons)
        self.choice: TeamArchiveChoice | None = None
        self.busy = False
        self.validate()

    def validate(self) -> TeamArchiveChoice | None:
        """Check every field as typed; the errors under their fields, Save only while all hold."""
        for key in FIELDS:
            self.set_error(key, "")
        self.choice = None
        catalog, folder, password = (
            self.catalog.text().strip(),
            self.folder.text().strip(),
            self.password.text(),
        )
        ok = self.checked("team_archive", catalog, check_catalog, empty_ok=True)
        ok = self.checked("team_archive_path", folder, check_data_path, empty_ok=True) and ok
        in_bucket = folder.lower().startswith("s3://")
        for widget in (self.endpoint, self.region, self.url_style, self.key_id, self.secret):
            widget.setEnabled(in_bucket)
        storage = {
            "team_archive_endpoint": self.endpoint.text().strip() if in_bucket else "",
            "team_archive_region": self.region.text().strip() if in_bucket else "",
            "team_archive_url_style": str(self.url_style.currentData() or "") if in_bucket else "",
        }
        ok = (
            self.checked(
                "team_archive_endpoint", storage["team_archive_endpoint"], check_endpoint, empty_ok=True
            )
            and ok
        )
        ok = (
            self.checked("team_archive_region", storage["team_archive_region"], check_region, empty_ok=True)
            and ok
        )
        keys = self._keys(in_bucket)
        ok = keys is not False and ok
        if password and not catalog:
            self.set_error("password", "there is no catalog to keep it for; give the catalog first")
            ok = False
        if ok:
            try:
                profile = HubProfile.model_validate(
                    {
                        **self.profile.model_dump(),
                        "team_archive": catalog,
                        "team_archive_path": folder,
                        **storage,
                    }
                )
            except ValidationError as exc:
                self._show(exc)
            else:
                self.choice = TeamArchiveChoice(profile, password, keys if isinstance(keys, tuple) else None)
        self._enable()
        return self.choice

    def _keys(self, in_bucket: bool) -> tuple[str, str] | bool | None:
        """The typed key id and secret (None: none typed; False: one without the other, or a bad id)."""
        key_id, secret = (self.key_id.text().strip(), self.secret.text()) if in_bucket else ("", "")
        if not key_id and not secret:
            return None
        if not key_id:
            self.set_error("key_id", "is required with the secret")
            return False
        if not self.checked("key_id", key_id, check_key_id, empty_ok=False):
            return False
        if not secret:
            self.set_error("secret", "is required with the access key id")
            return False
        return key_id, secret

    def _show(self, exc: ValidationError) -> None:
        """The profile's own rule that failed, under the field that fixes it (both or neither; every type)."""
        first = exc.errors()[0]
        message = str(first.get("msg", "")).removeprefix("Value error, ")
        key = str(first["loc"][0]) if first.get("loc") else ""
        if ": " in message and key not in FIELDS:
            key, message = message.split(": ", 1)
        if key == "event_types":  # a tenant that follows some types only: the catalog is what cannot be
            message = "this tenant follows some event types only; a team archive holds every type"
        self.set_error(key if key in FIELDS else "team_archive", message)

    def _enable(self) -> None:
        self.save_button.setEnabled(self.choice is not None and not self.busy)

    def _save(self) -> None:
        choice = self.validate()
        if choice is None or self.busy:
            return
        self.busy = True
        self._enable()
        self.save_requested.emit(choice)

    def saved(self) -> None:
        self.busy = False
        self.accept()

    def failed(self, key: str, text: str) -> None:
        """Say what failed under the field that can fix it; nothing was saved, the dialog stays."""
        self.busy = False
        self.validate()
        self.set_error(key if key in FIELDS else "team_archive", text)
