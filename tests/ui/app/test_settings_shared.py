"""A command run in a terminal while the app is open (`rules import`): the app takes in what it saved within
a second or two and uses it from then on, and the app's next save of its own settings does not undo it."""

from __future__ import annotations

import asyncio
import sys

import pytest

from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, running_app, until
from helpers.sigma_samples import VIP_DELETED, has_vip_deleted
from tenant_events.settings import TenantProfile, load_settings, save_settings


@pytest.mark.gui
@pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)
def test_rules_imported_while_the_app_runs_survive_its_next_save(qloop, ui_paths):
    rules_file = ui_paths.data_dir / "vip.yml"

    async def scenario() -> None:
        async with running_app(ui_paths) as app:
            rules_file.write_text(VIP_DELETED)
            command = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "tenant_events", "rules", "import", str(rules_file),
                "--data-dir", str(ui_paths.data_dir),
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            )  # fmt: skip
            _, err = await command.communicate()
            assert command.returncode == 0, err
            assert has_vip_deleted(load_settings(ui_paths))
            await until(
                lambda: has_vip_deleted(app.alerts.settings), 10, "the app taking in the imported rule"
            )
            assert has_vip_deleted(app.settings)  # the tenants' rules run it from their next evaluation
            app.set_dnd(3600.0)  # the user's next change in the app writes the settings file
            await asyncio.gather(*app.tasks)

    run_async(qloop, scenario())
    saved = load_settings(ui_paths)
    assert has_vip_deleted(saved) and saved.notifications.do_not_disturb_until is not None


@pytest.mark.gui
@pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)
def test_a_tenant_a_command_adds_gets_a_session_and_one_it_removes_stops(qloop, ui_paths):
    """What `login` (or a removal by hand) writes while the app runs: the new tenant is there to sign in to, as
    after a restart, and a removed one stops."""
    profile = TenantProfile(name="globex", domain="globex.example.com", client_id="c2")

    async def scenario() -> None:
        async with running_app(ui_paths) as app:
            settings = load_settings(ui_paths)  # another process reads, changes and writes the file
            settings.upsert(profile)
            save_settings(ui_paths, settings)
            await until(lambda: "globex" in app.sessions, 10, "a session for the tenant the command added")
            assert app.settings.tenant("globex") == profile
            app.set_dnd(3600.0)  # and the app's own next save keeps it
            saved = await until(
                lambda: (s := load_settings(ui_paths)).notifications.do_not_disturb_until and s,
                10,
                "the save",
            )  # (not every task: the new tenant's sign-in is looked for again while `login` may still run)
            assert [t.name for t in saved.tenants] == ["globex"]

            settings = load_settings(ui_paths)
            settings.tenants = []
            save_settings(ui_paths, settings)
            await until(lambda: "globex" not in app.sessions, 10, "the removed tenant's session stopped")

    run_async(qloop, scenario())
    assert load_settings(ui_paths).tenants == []
