"""Help ▸ About in the real app: the version, the data and log folders (each can be opened), the settings file and
the licences, in both themes."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QPushButton

from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, running_app, save_screenshot, until
from tenant_events import __version__
from tenant_events.auth.secret_store import MemorySecretStore
from tenant_events.ui.dialogs.about_dialog import AboutDialog
from tenant_events.ui.look.theme import apply_theme

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_help_about_says_version_folders_and_licence(qapp, qloop, ui_paths, theme):
    async def scenario() -> None:
        async with running_app(ui_paths, secret_store=MemorySecretStore()) as app:
            apply_theme(qapp, theme)
            w = app.window
            about = next(a for a in w.menu_actions.all if a.text() == "&About Tenant Events")
            assert about in w.menuBar().actions()[-1].menu().actions()  # in the Help menu
            about.trigger()
            dialog = await until(lambda: w.findChild(AboutDialog), 10, "the About dialog")
            await until(dialog.isVisible, 10, "shown")
            text = " ".join(label.text() for label in dialog.findChildren(type(dialog.folders["Data"])))
            assert f"Tenant Events {__version__}" in text
            assert dialog.folders["Data"].text() == str(ui_paths.data_dir)
            assert dialog.folders["Logs"].text() == str(ui_paths.log_dir)
            assert dialog.folders["Settings"].text() == str(ui_paths.settings_file)
            assert "MIT licence" in text and "LGPL" in text
            opens = [b.accessibleName() for b in dialog.findChildren(QPushButton) if b.text() == "Open"]
            assert opens == ["Open the data folder", "Open the logs folder"]
            save_screenshot(dialog, f"about-{theme}")
            dialog.close()

    try:
        run_async(qloop, scenario())
    finally:
        apply_theme(qapp, "light")
