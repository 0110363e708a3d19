"""The Settings dialog's side of the app: its tabs wired to the tenants, the alerts and the settings file.

The dialog edits a copy (SettingsSync.open_dialog) and asks for what it cannot do itself — add, edit, remove or
sign in to a tenant, a hub tenant's team archive, trying a rule — through signals, answered here by the app.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtWidgets import QApplication

from tenant_events.destinations.editor import DestinationEditor
from tenant_events.store.tier_disk import disk_per_tier
from tenant_events.ui.app import hub_connect
from tenant_events.ui.settings.settings_dialog import SettingsDialog

if TYPE_CHECKING:
    from tenant_events.settings import Settings
    from tenant_events.ui.alerts.app_alerts import AppAlerts
    from tenant_events.ui.app.first_run import FirstRun
    from tenant_events.ui.dialogs.connect_hub import ConnectHubDialog


class SettingsHost(hub_connect.HubHost, Protocol):
    """What the Settings dialog needs of the app (the app passes itself)."""

    @property
    def alerts(self) -> AppAlerts: ...
    @property
    def first_run(self) -> FirstRun: ...
    def open_hub_connect(self) -> ConnectHubDialog: ...
    async def apply_settings(self, settings: Settings) -> None: ...
    async def remove_tenant(self, name: str) -> None: ...
    async def sign_in(self, name: str) -> None: ...


def open_settings(app: SettingsHost) -> SettingsDialog:
    signed = {n for n, s in app.sessions.items() if s.is_signed_in}
    disk = {name: disk_per_tier(app.paths.database_file(name)) for name in app.sessions}
    dialog = SettingsDialog(
        app.settings_sync.open_dialog(),
        signed,
        app.window,
        DestinationEditor(app.paths, app.secrets),
        disk,
        app.alerts.silence_keeper,
    )
    dialog.destinations_page.changed.connect(lambda d: _destinations_saved(app, d))
    app.spawn(dialog.destinations_page.load())
    dialog.rules_page.set_tester(app.alerts.try_rule)
    dialog.rules_page.set_backtester(app.alerts.backtest)
    dialog.settings_changed.connect(lambda s: app.spawn(app.apply_settings(s)))
    dialog.add_tenant_requested.connect(lambda: app.first_run.open_connect())
    dialog.edit_tenant_requested.connect(lambda n: _edit_tenant(app, n))
    dialog.team_archive_requested.connect(lambda n: hub_connect.open_team_archive(app, n))
    dialog.remove_tenant_requested.connect(lambda n: app.spawn(app.remove_tenant(n)))
    dialog.sign_in_requested.connect(lambda n: app.spawn(app.sign_in(n)))
    dialog.sign_out_requested.connect(lambda n: app.spawn(app.tenants.sign_out(n)))
    app.settings_dialog = dialog
    before = QApplication.focusWidget()  # where the keyboard goes back to when Settings closes
    dialog.finished.connect(lambda _r: app.window.take_focus_back(before))
    dialog.open()
    return dialog


def _edit_tenant(app: SettingsHost, name: str) -> None:
    if app.settings.hub(name) is not None:  # a hub tenant is added again, not edited
        app.open_hub_connect()
    else:
        app.first_run.open_connect(app.settings.tenant(name))


def _destinations_saved(app: SettingsHost, destinations: list[Any]) -> None:
    """Settings ▸ Alert destinations saved the file itself: the app's copy follows, so no later save undoes it."""
    app.settings.destinations = list(destinations)
