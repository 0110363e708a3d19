"""Removing a tenant read from a team hub in Settings ▸ Tenants, in the real app with the real keyring: its row
says where it comes from, Remove stops its session, takes it out of the window and the settings file, and
deletes its hub secret from the keyring; its database file stays, as for a tenant signed in to directly."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest

from helpers.entity_stores import write_store
from helpers.fixtures_ui import (
    QT_OFFSCREEN_NOISE,
    remove_first_tenant,
    run_async,
    running_app,
    save_screenshot,
    until,
)
from helpers.hub_cli import stored_count
from helpers.keyrings import session_secret_store
from helpers.nats_hub import free_port
from tenant_events.auth.secret_store import MemorySecretStore
from tenant_events.hub.credentials import add_hub_profile, secret_slot
from tenant_events.settings import load_settings
from tenant_events.ui.app.hub_session import HubSession

pytestmark = [pytest.mark.gui, pytest.mark.hub, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


@pytest.mark.expect_warning_logs  # the hub is not running: the session says it cannot reach it
def test_a_hub_tenant_is_listed_and_removed_with_its_secret(qloop, ui_paths):
    store = session_secret_store()
    name = f"team-{uuid.uuid4().hex[:6]}"
    url = f"nats://127.0.0.1:{free_port()}"  # nothing listens there: removing needs no running hub
    added = add_hub_profile(
        ui_paths,
        store,
        "viewer-password",
        name=name,
        hub_urls=[url],
        hub_tenant="acme",
        auth="password",
        user="viewer",
    )
    database = ui_paths.database_file(name)
    database.parent.mkdir(parents=True, exist_ok=True)
    stored = len(write_store(database, 40, seed=3))  # read from the hub before; removing must leave it

    async def scenario() -> None:
        async with running_app(ui_paths, secret_store=store) as app:
            session = app.sessions[name]
            assert isinstance(session, HubSession)
            await until(lambda: name in app.window.ui_readers, 10, "its stored events in the window")
            app.open_settings()
            dialog = app.settings_dialog
            rows = [dialog.tenant_list.item(i).text() for i in range(dialog.tenant_list.count())]
            assert rows == [f"{name} — from hub {url} (not connected)"]
            save_screenshot(dialog, "settings-hub-tenant")
            await remove_first_tenant(dialog)
            assert name not in app.sessions and name not in app.window.ui_readers
            assert not session.link.running
            assert app.settings.hub(name) is None and dialog.settings.hub(name) is None
            dialog.buttons.button(dialog.buttons.StandardButton.Ok).click()  # OK does not bring it back
            await until(lambda: load_settings(ui_paths).hub(name) is None, 10, "the settings file")
            assert store.get(secret_slot(added, ui_paths.data_dir)) is None
            assert stored_count(database) == stored

        # gone after a restart too, and it can be added again under the same name
        async with running_app(ui_paths, secret_store=store) as app:
            assert name not in app.sessions and not app.settings.hubs
        add_hub_profile(
            ui_paths,
            store,
            "again",
            name=name,
            hub_urls=[url],
            hub_tenant="acme",
            auth="password",
            user="viewer",
        )
        assert load_settings(ui_paths).hub(name) is not None

    try:
        run_async(qloop, scenario())
    finally:
        store.delete(secret_slot(added, ui_paths.data_dir))


@pytest.mark.expect_warning_logs  # the hub never answers: the session says it cannot reach it
def test_a_hub_tenant_removed_while_it_connects_stops_and_connects_no_more(qloop, ui_paths):
    """Remove while the session is still waiting for the hub's first answer (a server that accepts and stays
    silent, so an attempt would last its 3 s connect timeout): the removal cuts the attempt short instead of
    waiting for it, nothing starts after it, and no connection stays open."""
    store = MemorySecretStore()
    name = f"team-{uuid.uuid4().hex[:6]}"
    open_now = [0]

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        open_now[0] += 1
        try:
            await reader.read()  # until the client gives up and closes
        finally:
            open_now[0] -= 1
            writer.close()

    async def scenario() -> None:
        server = await asyncio.start_server(silent, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        add_hub_profile(
            ui_paths,
            store,
            "viewer-password",
            name=name,
            hub_urls=[f"nats://127.0.0.1:{port}"],
            hub_tenant="acme",
            auth="password",
            user="viewer",
        )
        try:
            async with running_app(ui_paths, secret_store=store) as app:
                session = app.sessions[name]
                await until(lambda: open_now[0] > 0, 10, "the session to knock at the hub")
                app.open_settings()
                dialog = app.settings_dialog
                clicked = time.monotonic()
                await remove_first_tenant(dialog)
                took = time.monotonic() - clicked
                await until(lambda: open_now[0] == 0, 1, "the connection attempt to be over once removed")
                # not the attempt's 3 s: the removal cut it short (nothing else in it waits on the network)
                assert took < 2.5, f"the removal waited {took:.1f} s"
                # and nothing started after it
                assert not session.link.running and session.team_triage is None
                assert name not in app.sessions and load_settings(ui_paths).hub(name) is None
        finally:
            server.close()
            await server.wait_closed()

    run_async(qloop, scenario())
