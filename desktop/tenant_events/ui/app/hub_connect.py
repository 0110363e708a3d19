""" "Connect to a team hub": the dialog's Check and Add, done by the app (the dialog opens no connection).

    Check ─▶ read the key file (if any) ─▶ connect once, read the tenant's stream (hub/credentials.check_hub)
                                        └▶ "found: N events" or the error under the field that can fix it
    Add   ─▶ the same check ─▶ secret into the keyring, profile into settings (add_hub_profile)
          ─▶ the app starts a HubSession: the tenant appears in the window and reads from the hub

Errors: the hub unreachable (under the URL), credentials refused (under the password, token or key file), the
certificate not trusted (under the CA file), no such tenant on this hub (under the tenant's name). The NATS
client is imported on the first check, not at the app's start.

A hub tenant's team archive (Settings ▸ Tenants ▸ "Team archive…", ui/dialogs/team_archive_dialog.py): the
catalog's password into the keyring (a keyring that refuses it is said under the password), the profile saved,
and the tenant read again with the archive.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from tenant_events.errors import ConfigError, UserFixableError
from tenant_events.settings.hubs import HubProfile
from tenant_events.ui.dialogs.connect_hub import ConnectHubDialog, HubRequest
from tenant_events.ui.dialogs.team_archive_dialog import TeamArchiveChoice, TeamArchiveDialog

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from tenant_events.hub.credentials import HubCheck
    from tenant_events.paths import AppPaths
    from tenant_events.settings import Settings
    from tenant_events.settings.sync import SettingsSync
    from tenant_events.tenant.sign_in import SecretStore
    from tenant_events.ui.app.tenant_roster import TenantRoster
    from tenant_events.ui.settings.settings_dialog import SettingsDialog
    from tenant_events.ui.tenant_session import TenantSession
    from tenant_events.ui.window.main_window import MainWindow

log = logging.getLogger(__name__)

# ConfigError fields (hub/credentials.py, settings/hubs.py) → the dialog's field that fixes them
_FIELD_OF = {
    "hub tenant": "hub_tenant",
    "hub hub_tenant": "hub_tenant",
    "hub name": "name",
    "hub user": "user",
    "hub password": "secret",
    "hub token": "secret",
    "hub nkey": "key_file",
    "hub creds": "key_file",
    "hub key file": "key_file",
    "hub ca_file": "ca_file",
    "hub hub_urls": "urls",
}


class HubHost(Protocol):
    """What the hub dialog needs of the app (the app passes itself)."""

    hub_dialog: ConnectHubDialog | None
    settings_dialog: SettingsDialog | None

    @property
    def window(self) -> MainWindow: ...
    @property
    def paths(self) -> AppPaths: ...
    @property
    def secrets(self) -> SecretStore: ...
    @property
    def sessions(self) -> dict[str, TenantSession]: ...
    @property
    def settings(self) -> Settings: ...
    @property
    def settings_sync(self) -> SettingsSync: ...
    @property
    def tenants(self) -> TenantRoster: ...
    def spawn(self, coro: Awaitable[Any]) -> asyncio.Task[Any]: ...
    async def add_hub_session(self, profile: HubProfile) -> TenantSession: ...


def open_hub_connect(app: HubHost) -> ConnectHubDialog:
    if app.hub_dialog is not None and app.hub_dialog.isVisible():
        app.hub_dialog.raise_()
        return app.hub_dialog
    dialog = ConnectHubDialog(app.window)
    dialog.check_requested.connect(lambda r: app.spawn(check(dialog, r)))
    dialog.add_requested.connect(lambda r: app.spawn(add(app, dialog, r)))
    app.hub_dialog = dialog
    dialog.open()
    return dialog


@dataclass(frozen=True)
class Secret:
    """A secret on its way to the keyring; its repr hides it (the loop's thread executor logs what it passes
    and returns at debug level)."""

    value: str = field(repr=False)


def read_secret(request: HubRequest) -> Secret:
    """The typed password or token, or the key file's text, checked for its kind; ConfigError otherwise."""
    from tenant_events.hub.credentials import check_secret

    kind = request.profile.auth
    if not request.key_file:
        return Secret(check_secret(kind, request.secret))
    path = Path(request.key_file).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not a text file"
        raise ConfigError("hub key file", f"cannot read {path} ({reason})", "choose the file again") from None
    return Secret(check_secret(kind, text))


async def run_check(request: HubRequest) -> tuple[HubCheck, Secret]:
    """Connect once with the request's credentials: what the hub holds for the tenant, and the secret used."""
    from tenant_events.hub.connection import HubAuth, HubOptions
    from tenant_events.hub.credentials import check_hub

    profile = request.profile
    secret = await asyncio.to_thread(read_secret, request)
    auth = HubAuth(profile.auth, profile.user, secret.value)
    options = HubOptions(tuple(profile.hub_urls), auth, profile.ca_file)
    return await check_hub(options, profile.hub_tenant), secret


def found_text(profile: HubProfile, found: HubCheck) -> str:
    if found.messages == 0:
        return (
            f"Found {profile.hub_tenant} on the hub: its stream is there, but the relay has not published "
            "any events yet. They will appear as it does."
        )
    return (
        f"Found {profile.hub_tenant} on the hub: {found.messages:,} events stored "
        f"(up to number {found.last_sequence:,}). Add it to read them here."
    )


def where(exc: UserFixableError, request: HubRequest) -> tuple[str, str]:
    """The dialog field that can fix `exc`, and the line to show under it."""
    from tenant_events.hub.connection import HubInsecure, HubRefused, HubUnavailable

    text = f"{exc.message} — {exc.hint}" if exc.hint else exc.message
    if isinstance(exc, ConfigError):
        key = _FIELD_OF.get(exc.field, "urls")
        return key, text.removeprefix(f"{exc.field}: ")
    if isinstance(
        exc, HubInsecure
    ):  # an untrusted certificate (the CA file fixes it) or no TLS at all (the URL)
        return ("ca_file" if "certificate" in exc.message else "urls"), text
    if isinstance(exc, HubRefused):
        kind = request.profile.auth
        return {"none": "auth", "password": "secret", "token": "secret"}.get(kind, "key_file"), text
    if isinstance(exc, HubUnavailable):
        return "urls", text
    return "urls", text


async def check(dialog: ConnectHubDialog, request: HubRequest) -> None:
    try:
        found, _ = await run_check(request)
    except UserFixableError as exc:
        dialog.check_failed(*where(exc, request))
        return
    dialog.check_passed(found_text(request.profile, found))


async def add(app: HubHost, dialog: ConnectHubDialog, request: HubRequest) -> TenantSession | None:
    """Check again (nothing that cannot connect is saved), keep the secret in the keyring, save, start it."""
    from tenant_events.hub.credentials import add_hub_profile

    profile = request.profile
    try:
        if profile.name in app.sessions:
            raise ConfigError(
                "hub name", f"{profile.name!r} is already a tenant here", "give it another name"
            )
        _, secret = await run_check(request)
        if not dialog.isVisible():  # cancelled while the hub answered: nothing is saved
            return None
        fields = profile.model_dump()
        saved = await asyncio.to_thread(
            lambda: add_hub_profile(app.paths, app.secrets, secret.value, **fields)
        )
    except UserFixableError as exc:
        dialog.check_failed(*where(exc, request))
        return None
    dialog.added()
    if not app.secrets.persistent:
        app.window.statusBar().showMessage(
            f"The system keyring is not available: the hub's secret for {saved.name} is kept only until you quit.",
            30000,
        )
    app.window.bring_to_front()
    return await app.add_hub_session(saved)


async def forget_secret(app: HubHost, hub: HubProfile) -> None:
    """The removed hub tenant's secret out of the keyring; the status bar says so when the keyring refused."""
    from tenant_events.hub.credentials import forget_hub_secret

    name = hub.name
    problem = await asyncio.to_thread(forget_hub_secret, app.secrets, hub, app.paths.data_dir)
    if problem is not None:
        log.warning("%s: could not delete the hub secret: %s", name, problem)
        app.window.statusBar().showMessage(
            f"{name} is removed, but its hub secret is still in the keyring: {problem}", 30000
        )


def open_team_archive(app: HubHost, name: str) -> TeamArchiveDialog | None:
    """Settings ▸ Tenants ▸ "Team archive…" for `name` (a hub tenant; nothing for another)."""
    profile = app.settings.hub(name)
    if profile is None:
        return None
    dialog = TeamArchiveDialog(profile, app.window)
    dialog.save_requested.connect(lambda choice: app.spawn(save_team_archive(app, dialog, choice)))
    dialog.open()
    return dialog


async def save_team_archive(app: HubHost, dialog: TeamArchiveDialog, choice: TeamArchiveChoice) -> None:
    """The password and the storage's keys kept first (nothing is saved when the keyring refuses them), then the
    profile; the tenant is read again with its archive (its session made anew: the archive is part of what it
    reads)."""
    from tenant_events.tenant.team_archive import keep_keys, keep_password

    profile = choice.profile
    if choice.password:
        try:
            await asyncio.to_thread(keep_password, app.secrets, profile.team_archive, choice.password)
        except Exception as exc:  # (the keyring's own failure: its words, never the password)
            dialog.failed("password", f"the keyring did not keep it ({type(exc).__name__}); try again")
            return
    if choice.keys and profile.team_lake is not None:
        try:
            await asyncio.to_thread(keep_keys, app.secrets, profile.team_lake, choice.keys)
        except Exception as exc:  # (as the password: never the keys)
            dialog.failed("secret", f"the keyring did not keep the keys ({type(exc).__name__}); try again")
            return
    app.settings.upsert_hub(profile)
    if app.settings_dialog is not None:  # (its copy too: its OK or Apply must not bring the old one back)
        app.settings_dialog.settings.upsert_hub(profile)
    await app.settings_sync.save()
    dialog.saved()
    if profile.name in app.sessions:
        await app.tenants.remove(profile.name)
    await app.add_hub_session(profile)


def add_menu_entry(window: MainWindow, slot: Callable[[], object]) -> QAction:
    """File ▸ "Connect to a team hub…", above Settings (where tenants are added)."""
    action = QAction("Connect to a team &hub…", window)
    action.triggered.connect(slot)
    settings = window.menu_actions.settings
    menu = next((m for m in settings.associatedObjects() if isinstance(m, QMenu)), None)
    if menu is not None:
        menu.insertAction(settings, action)
    window.menu_actions.all.append(action)
    return action
