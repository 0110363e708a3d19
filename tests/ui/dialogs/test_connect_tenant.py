""" "Connect your tenant" in the running app: the tenant is checked (discovery reachable, the same issuer) before
its profile is saved; a failure stays in the dialog under the domain and saves nothing. Against the real
simulator's discovery document and a domain that does not exist."""

from __future__ import annotations

import asyncio
import json

import pytest
from PySide6.QtWidgets import QDialogButtonBox

from helpers.browser import act_as_browser
from helpers.fixtures_ui import (
    QT_OFFSCREEN_NOISE,
    profile_for,
    run_async,
    running_app,
    save_screenshot,
    until,
)
from tenant_events.auth.secret_store import MemorySecretStore
from tenant_events.tenant.origin import claim_origin

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


def _saved_tenants(paths) -> list[str]:
    if not paths.settings_file.exists():
        return []
    return [t["name"] for t in json.loads(paths.settings_file.read_text())["tenants"]]


def test_connect_checks_the_tenant_before_saving(qloop, ui_paths, make_simulator):
    sim = make_simulator(seed=5, backlog=3, rate=0.0)
    port = sim.auth_url.rsplit(":", 1)[1]
    opened: list[str] = []

    async def scenario() -> None:
        async with running_app(ui_paths, opener=opened.append, secret_store=MemorySecretStore()) as app:
            app.first_run.open_connect()
            d = app.first_run.connect_dialog
            assert d is not None and d.isVisible()
            ok = d.buttons.button(QDialogButtonBox.StandardButton.Ok)
            d.client_id.setText(sim.demo_client_id)

            # A domain that does not exist: the error stays in the dialog, next to the domain.
            d.domain.setText("nonexistent.invalid")
            ok.click()
            await until(lambda: d.error_text("domain"), 30, "the check of nonexistent.invalid")
            assert "cannot reach the tenant at https://nonexistent.invalid" in d.error_text("domain")
            assert d.isVisible() and ok.isEnabled()
            assert _saved_tenants(ui_paths) == [] and app.sessions == {}
            save_screenshot(d, "connect-tenant-unreachable")

            # The simulator under another name: it answers, but its issuer is 127.0.0.1, not localhost.
            d.domain.setText(f"localhost:{port}")
            ok.click()
            await until(lambda: d.error_text("domain"), 30, "the check of localhost")
            assert f"names issuer 'http://127.0.0.1:{port}/'" in d.error_text("domain")
            assert "use the tenant's own domain" in d.error_text("domain")
            assert _saved_tenants(ui_paths) == []
            save_screenshot(d, "connect-tenant-wrong-issuer")

            # The tenant itself (the simulator accepts any loopback port): saved, dialog closed, sign-in.
            d.domain.setText(f"127.0.0.1:{port}")
            d.ports.setText("")
            ok.click()
            await until(lambda: not d.isVisible(), 30, "the dialog to close after the check")
            await until(lambda: opened, 30, "the browser sign-in")
            assert _saved_tenants(ui_paths) == [f"127-0-0-1-{port}"]
            await asyncio.to_thread(act_as_browser, opened[0])
            await until(lambda: app.sessions[f"127-0-0-1-{port}"].is_signed_in, 30, "the sign-in")

    run_async(qloop, scenario())


def test_connect_refuses_a_name_that_belongs_to_another_tenant(qloop, ui_paths, make_simulator):
    """A profile keeps its tenant: editing it to another domain, or reusing the name of a removed tenant whose
    database is still there, is refused under the name; nothing is saved or sent."""
    first = make_simulator(seed=5, backlog=3, rate=0.0)
    other = make_simulator(seed=6, backlog=3, rate=0.0)
    opened: list[str] = []

    async def scenario() -> None:
        async with running_app(ui_paths, opener=opened.append, secret_store=MemorySecretStore()) as app:
            await app.add_tenant(profile_for(first, "work"), sign_in=False)
            claim_origin(ui_paths, "work", first.base_url)  # what starting it records
            ui_paths.database_file("work").write_bytes(b"")  # a database of the first tenant's events
            saved = ui_paths.settings_file.read_text()

            app.first_run.open_connect(app.settings.tenant("work"))  # Settings ▸ Edit
            d = app.first_run.connect_dialog
            ok = d.buttons.button(QDialogButtonBox.StandardButton.Ok)
            d.domain.setText(other.auth_url.split("//")[1])
            ok.click()
            await until(lambda: d.error_text("name"), 30, "the refusal under the name")
            assert f"profile 'work' follows {first.auth_url}" in d.error_text("name")
            assert "give the new one another name" in d.error_text("name")
            assert d.isVisible() and ui_paths.settings_file.read_text() == saved and not opened
            d.reject()

            await app.remove_tenant("work")  # the profile goes, its database stays
            app.first_run.open_connect()
            d = app.first_run.connect_dialog
            ok = d.buttons.button(QDialogButtonBox.StandardButton.Ok)
            d.client_id.setText(other.demo_client_id)
            d.domain.setText(other.auth_url.split("//")[1])
            d.name.setText("work")
            ok.click()
            await until(lambda: d.error_text("name"), 30, "the refusal under the name")
            assert f"holds the events of {first.base_url}, not of {other.base_url}" in d.error_text("name")
            assert _saved_tenants(ui_paths) == [] and not opened

    run_async(qloop, scenario())
