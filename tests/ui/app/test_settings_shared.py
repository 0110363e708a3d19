"""Commands run in a terminal while the app is open (`rules import`, `login`, a tenant removed): the app takes in
what they saved within a second or two and uses it from then on (rules, a session signed in with the sign-in
`login` stored), and the app's next save of its own settings does not undo it."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest

from helpers.browser import act_as_browser
from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, running_app, until
from helpers.sigma_samples import VIP_DELETED, has_vip_deleted
from helpers.sign_ins import forget_token
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


@pytest.mark.gui
@pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)
def test_a_login_in_a_terminal_while_the_app_runs_signs_the_app_in_too(qloop, ui_paths, simulator):
    """`login` saves the profile, then waits for its browser step: the app takes the tenant in at once, finds
    no sign-in yet, and looks again until the terminal's sign-in is stored (the real keyring)."""
    data = str(ui_paths.data_dir)
    env = {k: v for k, v in os.environ.items() if k != "TENANT_EVENTS_ACCESS_TOKEN"}
    login = subprocess.Popen(
        [sys.executable, "-m", "tenant_events", "login", "--no-browser", "--auth-url", simulator.auth_url,
         "--client-id", simulator.demo_client_id, "--name", "acme", "--data-dir", data],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip

    async def scenario() -> None:
        async with running_app(ui_paths) as app:
            assert login.stdout is not None
            url = await asyncio.to_thread(login.stdout.readline)  # the profile is saved by now
            session = await until(lambda: app.sessions.get("acme"), 10, "the tenant login added")
            await until(lambda: not session.is_signed_in and session.status.reason, 10, "a first look")
            assert not session.is_signed_in  # nothing stored yet: the browser step is still to come
            await asyncio.to_thread(act_as_browser, url.strip())
            _, err = await asyncio.to_thread(login.communicate, timeout=60)
            assert login.returncode == 0, err
            await until(lambda: session.is_signed_in, 20, "the app signed in with the stored sign-in")

    try:
        run_async(qloop, scenario())
    finally:
        if login.poll() is None:
            login.kill()
        forget_token(data, "acme")
