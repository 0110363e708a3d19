"""Alert links handed to the running app (as the desktop hands over a click on one): a team delivery's link opens
the team's alert by its name on the hub in the hub profile that reads that tenant, whatever id this app's copy
has; a link to an alert this app does not have opens the inbox with a note saying why, never another alert."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QMessageBox

from helpers.deliveries import alert_write, store_alerts
from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, running_app, until
from helpers.team_alerts import team_payload
from tenant_events.auth.secret_store import MemorySecretStore
from tenant_events.hub.credentials import secret_slot
from tenant_events.settings import load_settings, save_settings
from tenant_events.settings.hubs import HubProfile
from tenant_events.store.team_alert_rows import TeamAlertStore
from tenant_events.tenant.team_feed import team_row
from tenant_events.url_forms import alert_link, team_alert_link

pytestmark = [pytest.mark.gui, pytest.mark.hub, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


def _notes(app) -> list[str]:
    inbox = app.alerts.inbox
    if inbox is None:
        return []
    return [n.text() for n in inbox.findChildren(QMessageBox, "alert-link-note") if n.isVisible()]


def test_a_team_link_opens_the_teams_alert_here_and_a_missing_alert_is_said(qloop, ui_paths, nats_single):
    hub = nats_single
    profile = HubProfile(
        name="team-acme", hub_urls=[hub.urls.split(",")[0]], hub_tenant="acme", auth="password", user="viewer"
    )
    settings = load_settings(ui_paths)
    settings.hubs.append(profile)
    save_settings(ui_paths, settings)
    secrets = MemorySecretStore()
    secrets.set(secret_slot(profile, ui_paths.data_dir), hub.credentials.viewer)
    db = ui_paths.database_file("team-acme")
    store_alerts(db, [alert_write("mass-deletion")])  # this app's own alert 1: a relay's id could name it
    with TeamAlertStore(db) as store:
        stored = [store.store(team_row(team_payload(e))) for e in ("evt_b", "evt_c")]
    ids = [s[0].id for s in stored if s is not None]
    assert ids == [2, 3]  # the relay that delivered may have called evt_c's alert 1 or 2: this app calls it 3

    async def scenario() -> None:
        async with running_app(ui_paths, secret_store=secrets) as app:
            app.handle_argv(["tenant-events", team_alert_link("acme", "each-group.evt_c")])
            await until(lambda: app.alerts.inbox is not None and app.alerts.inbox.current(), 10, "the alert")
            shown = app.alerts.inbox.current()
            assert (shown.profile, shown.alert.id) == ("team-acme", 3)
            assert shown.alert.first_event_id == "evt_c" and _notes(app) == []

            # not here yet: the inbox and a note, no other alert opened
            app.handle_argv(["tenant-events", team_alert_link("acme", "each-group.evt_z")])
            await until(lambda: _notes(app), 10, "the note")
            assert "has not reached this app yet" in _notes(app)[0] and "“acme”" in _notes(app)[0]
            for note in app.alerts.inbox.findChildren(QMessageBox, "alert-link-note"):
                note.close()

            # a hub tenant this app does not read
            app.handle_argv(["tenant-events", team_alert_link("globex", "each-group.evt_c")])
            await until(lambda: _notes(app), 10, "the note")
            assert (
                "which this app does not read" in _notes(app)[0]
                and "Connect to the team hub" in _notes(app)[0]
            )
            for note in app.alerts.inbox.findChildren(QMessageBox, "alert-link-note"):
                note.close()

            # this app's own link still opens by id; another computer's id for a tenant it lacks is said
            app.handle_argv(["tenant-events", alert_link("team-acme", 2)])
            await until(lambda: app.alerts.inbox.current().alert.id == 2, 10, "alert 2")
            assert _notes(app) == []
            app.handle_argv(["tenant-events", alert_link("acme", 3)])
            await until(lambda: _notes(app), 10, "the note")
            assert "no tenant named “acme”" in _notes(app)[0]

    run_async(qloop, scenario(), timeout=90)
