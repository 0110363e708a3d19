""" "Connect to a team hub" in the real app, against a real nats-server fed by a real relay over the simulator:
the dialog's Check (found, unreachable, refused, no such tenant), Add (the secret only in the keyring, never in
settings.json or the log), the hub tenant's events in the window, and the tenant read again after a restart."""

from __future__ import annotations

import contextlib
import logging
import uuid

import pytest

from helpers.fixtures_engine import OLD
from helpers.fixtures_ui import (
    QT_OFFSCREEN_NOISE,
    run_async,
    running_app,
    save_screenshot,
    signal_future,
    until,
)
from helpers.hub_cli import HubCli
from helpers.keyrings import session_secret_store
from helpers.nats_hub import free_port
from tenant_events.auth.secret_store import MemorySecretStore
from tenant_events.hub.credentials import remove_hub_profile, secret_slot
from tenant_events.settings import load_settings
from tenant_events.ui.app.hub_session import HubSession
from tenant_events.view.tenant_status import TrayState

pytestmark = [pytest.mark.gui, pytest.mark.hub, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]
EVENTS = 120


@pytest.fixture
def relay(simulator, nats_single, tmp_path):
    """A collector publishing the simulator's tenant as `acme` on the hub."""
    simulator.emit(EVENTS)
    proc = HubCli(
        "relay",
        "--base-url",
        simulator.base_url,
        "--from-timestamp",
        OLD,
        "--data-dir",
        str(tmp_path / "relay"),
        "--hub",
        nats_single.urls,
        "--hub-tenant",
        "acme",
        "--hub-user",
        "collector",
        env={
            "TENANT_EVENTS_ACCESS_TOKEN": simulator.mint_token(ttl=3600),
            "TENANT_EVENTS_HUB_PASSWORD": nats_single.credentials.collector,
        },
    )
    try:
        proc.wait_for("leader: holds")
        yield proc
    finally:
        proc.stop()


def fill(dialog, urls: str, hub_tenant: str, password: str, name: str = "") -> None:
    dialog.urls.setText(urls)
    dialog.hub_tenant.setText(hub_tenant)
    dialog.name.setText(name)
    dialog.auth.setCurrentIndex(dialog.auth.findData("password"))
    dialog.user.setText("viewer")
    dialog.secret.setText(password)


async def press_check(dialog) -> None:
    dialog.check_button.click()
    await until(lambda: not dialog.busy, 20, "the hub check to finish")


def test_check_finds_the_tenant_or_says_what_is_wrong_under_the_field(qloop, ui_paths, nats_single, relay):
    hub = nats_single

    async def scenario() -> None:
        async with running_app(ui_paths, secret_store=MemorySecretStore()) as app:
            dialog = app.open_hub_connect()
            assert dialog.isVisible() and not dialog.check_button.isEnabled()  # nothing typed yet
            fill(dialog, hub.urls, "acme", hub.credentials.viewer)
            assert dialog.check_button.isEnabled() and dialog.add_button.isEnabled()
            # found: the stream is there with what the relay published (all of it, once the relay caught up)
            for _ in range(100):
                await press_check(dialog)
                text = dialog.found.text()
                assert text.startswith("Found acme on the hub:"), text
                if f"{EVENTS:,} events stored" in text:
                    break
            assert f"{EVENTS:,} events stored" in text, text
            assert not any(dialog.error_text(k) for k in dialog.errors)
            save_screenshot(dialog, "connect-hub-found-light")

            # a tenant this viewer may not read (accounts.conf pins it to one): under the tenant's name
            dialog.hub_tenant.setText("nobody")
            await press_check(dialog)
            assert "this hub user may not read 'nobody'" in dialog.error_text("hub_tenant")
            assert dialog.found.text() == ""

            # bad credentials: under the password, in one line
            fill(dialog, hub.urls, "acme", "not-the-password")
            await press_check(dialog)
            assert "refused the sign-in" in dialog.error_text("secret"), dialog.error_text("secret")
            assert "not-the-password" not in dialog.error_text("secret")

            # unreachable: under the URL
            fill(dialog, f"nats://127.0.0.1:{free_port()}", "acme", hub.credentials.viewer)
            await press_check(dialog)
            assert "cannot reach the hub" in dialog.error_text("urls"), dialog.error_text("urls")
            save_screenshot(dialog, "connect-hub-unreachable-light")

            # a bad URL never reaches the hub: said as typed, and the buttons stay off
            dialog.urls.setText("http://127.0.0.1:4222")
            assert "is not a hub URL" in dialog.error_text("urls")
            assert not dialog.check_button.isEnabled()
            dialog.urls.setText("tls://")
            assert "names no host" in dialog.error_text("urls")
            dialog.reject()
            assert "acme" not in app.sessions  # a check saves nothing

    run_async(qloop, scenario())


@pytest.mark.dbus
def test_add_keeps_the_secret_in_the_keyring_and_the_window_shows_the_hubs_events(
    qloop, ui_paths, nats_single, relay, caplog
):
    hub = nats_single
    store = session_secret_store()
    name = f"team-{uuid.uuid4().hex[:6]}"
    password = hub.credentials.viewer
    caplog.set_level(logging.DEBUG)

    async def scenario() -> None:
        async with running_app(ui_paths, secret_store=store) as app:
            w = app.window
            assert app.first_run.welcome is not None  # no tenant yet: the welcome window offers the hub too
            app.first_run.welcome.hub_button.click()
            dialog = app.hub_dialog
            assert dialog is not None and dialog.isVisible()
            fill(dialog, hub.urls, "acme", password, name=name)
            added = signal_future(app.tenants.tenant_added, 30)
            dialog.add_button.click()
            await added
            assert not dialog.isVisible() and app.first_run.welcome is None
            session = app.sessions[name]
            assert isinstance(session, HubSession) and session.is_signed_in
            await until(lambda: w.tenant == name and w.model.rowCount() >= EVENTS, 30, "the hub's events")
            await until(lambda: session.status.state is TrayState.LIVE, 30, "live from the hub")
            assert session.status.line().startswith(f"{name}: live")
            assert w.model.event_at(0).type  # real rows, decoded as from the tenant

        # the secret is in the keyring, and nowhere in the settings file or the log
        assert store.get(secret_slot(load_settings(ui_paths).hub(name), ui_paths.data_dir)) == password
        settings_text = ui_paths.settings_file.read_text()
        assert f'"{name}"' in settings_text and password not in settings_text
        assert password not in caplog.text

        # after a restart the hub tenant is read again with the keyring's secret (no dialog, no welcome)
        async with running_app(ui_paths, secret_store=store) as app:
            assert app.first_run.welcome is None
            session = app.sessions[name]
            await until(lambda: session.status.state is TrayState.LIVE, 30, "live again after a restart")
            await until(lambda: name in app.window.ui_readers, 10, "the tenant in the window")

    try:
        run_async(qloop, scenario())
    finally:
        with contextlib.suppress(Exception):
            remove_hub_profile(ui_paths, store, name)
