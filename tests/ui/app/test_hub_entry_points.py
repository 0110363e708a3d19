""" "Connect to a team hub" is reachable wherever a tenant is added: the welcome window, the "Connect your
tenant" dialog, the window's File menu and the tray menu; each opens the app's one hub dialog."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QMenu

from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, running_app, save_screenshot, until
from tenant_events.auth.secret_store import MemorySecretStore
from tenant_events.ui.dialogs.connect_hub import ConnectHubDialog

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


def hub_dialogs(app) -> list[ConnectHubDialog]:
    return [d for d in app.window.findChildren(ConnectHubDialog) if d.isVisible()]


def test_every_way_in_opens_the_hub_dialog(qloop, ui_paths):
    async def scenario() -> None:
        async with running_app(ui_paths, secret_store=MemorySecretStore()) as app:
            # the welcome window (first run)
            assert app.first_run.welcome is not None and app.first_run.welcome.hub_button.isVisible()
            save_screenshot(app.first_run.welcome, "welcome-with-hub")
            app.first_run.welcome.hub_button.click()
            await until(lambda: hub_dialogs(app), 5, "the hub dialog from the welcome window")
            assert app.hub_dialog is not None and app.hub_dialog.windowTitle() == "Connect to a team hub"
            app.hub_dialog.reject()

            # "Connect your tenant" → "Connect to a team hub instead…": that dialog closes, the hub's opens
            app.first_run.open_connect()
            tenant_dialog = app.first_run.connect_dialog
            assert tenant_dialog is not None and tenant_dialog.isVisible()
            save_screenshot(tenant_dialog, "connect-tenant-with-hub")
            tenant_dialog.hub_button.click()
            assert not tenant_dialog.isVisible()
            await until(lambda: hub_dialogs(app), 5, "the hub dialog from the connect dialog")
            app.hub_dialog.reject()

            # File ▸ Connect to a team hub…, above Settings
            settings = app.window.menu_actions.settings
            file_menu = next(m for m in settings.associatedObjects() if isinstance(m, QMenu))
            texts = [a.text() for a in file_menu.actions()]
            assert texts.index("Connect to a team &hub…") == texts.index("&Settings…") - 1
            next(a for a in file_menu.actions() if a.text() == "Connect to a team &hub…").trigger()
            await until(lambda: hub_dialogs(app), 5, "the hub dialog from the File menu")
            # asked again while open: the same dialog comes forward, no second one
            assert app.open_hub_connect() is app.hub_dialog and len(hub_dialogs(app)) == 1
            app.hub_dialog.reject()

    run_async(qloop, scenario())


def test_the_tray_menu_offers_the_hub(qtbot):
    from tenant_events.ui.tray.tray_icon import Tray

    tray = Tray()
    asked: list[bool] = []
    tray.hub_requested.connect(lambda: asked.append(True))
    assert tray.hub_action in tray.menu.actions() and tray.hub_action.text() == "Connect to a team hub…"
    tray.hub_action.trigger()
    assert asked == [True]
    tray.menu.deleteLater()
