"""Settings ▸ Tenants ▸ Remove in the real app, with the real keyring and the real simulator: the tenant's
sign-in is revoked at the tenant and its keyring slot cleared (an old-form slot of that name too); its database
file stays."""

from __future__ import annotations

import asyncio
import os
import uuid

import httpx
import pytest

from helpers.browser import act_as_browser
from helpers.fixtures_ui import (
    QT_OFFSCREEN_NOISE,
    profile_for,
    remove_first_tenant,
    run_async,
    running_app,
    until,
)
from tenant_events.auth.secret_store import open_secret_store
from tenant_events.settings import load_settings

pytestmark = [pytest.mark.gui, pytest.mark.dbus, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]

VISITS: list[asyncio.Future] = []


def browser(url: str) -> None:
    VISITS.append(asyncio.ensure_future(asyncio.to_thread(act_as_browser, url)))


def test_remove_tenant_revokes_its_sign_in_and_clears_its_keyring_slot(qloop, ui_paths, make_simulator):
    if os.environ.get("TENANT_EVENTS_REAL_KEYRING") != "1":
        pytest.skip("needs the session keyring: run via ./run test (TENANT_EVENTS_REAL_KEYRING=1)")
    sim = make_simulator(backlog=5, heartbeat=0.2)
    store = open_secret_store().store
    name = f"gone-{uuid.uuid4().hex[:6]}"
    store.set(name, "L" * 2500)  # what an older version kept under the name alone, in three pieces

    async def scenario() -> tuple[str, str]:
        async with running_app(ui_paths, opener=browser, secret_store=store) as app:
            session = await app.add_tenant(profile_for(sim, name))
            await asyncio.gather(*VISITS)
            assert session.is_signed_in
            slot = session.link.sign_in_state.slot.key
            token = store.get(slot)
            assert token, "the refresh token is in the keyring"
            await until(lambda: ui_paths.database_file(name).exists(), 20, "its database")
            app.open_settings()
            dialog = app.settings_dialog
            await remove_first_tenant(dialog)
            await until(lambda: store.get(slot) is None, 20, "the keyring slot to be cleared")
            dialog.buttons.button(dialog.buttons.StandardButton.Ok).click()
            await until(lambda: not load_settings(ui_paths).tenants, 10, "the settings file")
            return slot, token

    try:
        slot, token = run_async(qloop, scenario())
        assert store.get(slot) is None and store.get(name) is None
        import keyring

        leftovers = [
            i for i in range(4) if keyring.get_password("tenant-events", f"refresh-token:{name}#{i}")
        ]
        assert leftovers == [], "every piece of the old-form slot is gone"
        # revoked at the tenant too: the token no longer refreshes
        answer = httpx.post(
            sim.auth_url + "/oauth/token",
            data={"grant_type": "refresh_token", "client_id": sim.demo_client_id, "refresh_token": token},
        )
        assert answer.status_code == 403 and answer.json()["error"] == "invalid_grant"
        assert ui_paths.database_file(name).exists(), "the database file stays"
    finally:
        store.delete(name)
