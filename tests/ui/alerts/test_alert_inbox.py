"""The alerts inbox in the real app: alerts raised by a real simulator's incidents, listed newest first with
their events; "Show these events in the table" filters the window's table to exactly them with a removable
"alert: <rule>" chip (the query term alert:ID); one mark-read rule (opening an alert, by selecting it here or
clicking its notification, marks it read); mark all read; each moves the unread count on the window's Alerts
button, the tray's menu list and the tray icon's badge."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from helpers.alert_events import EVERY_CONNECTION_CHANGE
from helpers.browser import act_as_browser
from helpers.fixtures_ui import (
    QT_OFFSCREEN_NOISE,
    profile_for,
    run_async,
    running_app,
    until,
)
from helpers.shots import shot
from tenant_events.alert_settings import WEEKDAYS, AlertSettings, WorkingHours
from tenant_events.auth.secret_store import MemorySecretStore
from tenant_events.settings import Settings, save_settings
from tenant_events.ui.alerts.inbox_model import Col

pytestmark = [pytest.mark.gui, pytest.mark.dbus, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]
AROUND_THE_CLOCK = WorkingHours(start="00:00", end="00:00", days=list(WEEKDAYS))
_visits: list[asyncio.Future[str]] = []


def browser(url: str) -> None:
    _visits.append(asyncio.ensure_future(asyncio.to_thread(act_as_browser, url)))


def test_inbox_mark_read_and_show_events_in_the_table(qloop, ui_paths, make_simulator, dunst, tray_host):
    sim = make_simulator(seed=6, backlog=0, rate=4.0, heartbeat=0.2)
    # the per-actor mass deletion rule is off here: this is about the inbox, with one alert per incident; so is
    # the sign-up burst, which routine traffic at 4 events a second (about 50 sign-ups a minute) crosses at times
    only_global = [
        {"id": "mass-deletion-by-actor", "enabled": False},
        {"id": "signup-burst", "enabled": False},
        *EVERY_CONNECTION_CHANGE,
    ]
    save_settings(ui_paths, Settings(alerts=AlertSettings(working_hours=AROUND_THE_CLOCK, rules=only_global)))

    async def scenario() -> None:
        async with running_app(ui_paths, opener=browser, secret_store=MemorySecretStore()) as app:
            w, alerts, tray = app.window, app.alerts, app.tray
            assert tray is not None and app.tray_wiring.alert_menu is not None
            assert app.tray_wiring.alert_menu.menu.title() == "Alerts" and tray.unread == 0
            session = await app.add_tenant(profile_for(sim, "acme"))
            await until(lambda: session.status.state.value == "live", 30, "live")
            await asyncio.to_thread(sim.scenario, "org_deleted")
            await until(lambda: alerts.unread == 1, 20, "the first alert")
            await asyncio.to_thread(sim.scenario, "mass_deletion", n=24, over_s=1)
            await until(lambda: alerts.unread == 2, 20, "the second alert")
            book = alerts.book
            # (the whole burst; a routine deletion of the simulated traffic may join it on a slow machine)
            await until(lambda: book.entries()[0].alert.event_count >= 24, 20, "the whole burst")

            # unread on the window, the tray menu, the badge and the tooltip
            assert alerts.action.iconText() == "Alerts (2)"
            button = alerts.button
            assert button is not None  # the menu bar's corner made room for the count: not cut to "Ale…2)"
            await until(lambda: button.width() >= button.sizeHint().width(), 5, "the whole Alerts (2) button")
            menu = app.tray_wiring.alert_menu.menu
            assert menu.title() == "Alerts — 2 unread"
            listed = [a.text() for a in menu.actions() if a.text()]
            assert listed[0].startswith("● ▲ Mass deletion · acme")
            assert listed[1].startswith("● ◆ Organization deleted · acme")
            assert tray.unread == 2 and "2 unread alerts" in tray.icon.toolTip()

            # the window's shortcut opens the inbox, newest first; nothing is selected, nothing read yet
            w.bring_to_front()
            alerts.action.trigger()
            inbox = alerts.inbox
            assert inbox is not None and inbox.isVisible()
            rows = [inbox.model.index(r, Col.ALERT).data() for r in range(inbox.model.rowCount())]
            assert rows == ["Mass deletion", "Organization deleted"]
            assert inbox.summary.text() == "2 unread · 2 alerts" and alerts.unread == 2

            # selecting an alert opens it: read at once, as clicking its notification does
            inbox.table.setFocus()
            QTest.keyClick(inbox.table, Qt.Key.Key_Down)  # the keyboard selects the first row
            assert inbox.current() is not None and inbox.current().alert.rule_id == "mass-deletion"
            opened = inbox.current().alert
            assert inbox.event_list.count() == len(inbox.shown_events) == opened.event_count >= 24
            assert alerts.unread == 1 and inbox.summary.text() == "1 unread · 2 alerts"
            assert inbox.current().alert.read  # the row is repainted in place, still selected
            assert menu.title() == "Alerts — 1 unread" and alerts.action.iconText() == "Alerts (1)"
            assert [a.text()[:1] for a in menu.actions()[:2]] == ["○", "●"]
            inbox.resize(1600, 800)
            shot(inbox, "alerts-inbox-light")

            # the other one by its notification's click: the same rule, selected and read
            org = next(e for e in book.entries() if e.alert.rule_id == "org-deleted")
            alerts.notes.alert_requested.emit("acme", org.alert.id)
            assert inbox.current() is not None and inbox.current().alert.id == org.alert.id
            assert alerts.unread == 0 and inbox.summary.text() == "0 unread · 2 alerts"
            assert tray.unread == 0 and "unread alert" not in tray.icon.toolTip()
            assert menu.title() == "Alerts" and alerts.action.iconText() == "Alerts"

            # "Show these events in the table": exactly the alert's deletions, by the alert chip (not 24 id: terms)
            inbox.table.selectRow(0)
            mass = inbox.current()
            inbox.table_button.click()

            # (a routine deletion may still join the alert meanwhile: the table and the inbox both follow it)
            def table_is_the_alert() -> bool:
                rows = {w.model.event_at(r).event_id for r in range(w.model.rowCount())}
                return not w.model.counting and rows == {e.event_id for e in inbox.shown_events}

            def left_as() -> str:
                rows = {w.model.event_at(r).event_id for r in range(w.model.rowCount())}
                shown = {e.event_id for e in inbox.shown_events}
                return (
                    f"the filtered table: the alert's events (counting {w.model.counting}; only in the table"
                    f" {sorted(rows - shown)}; only in the inbox {sorted(shown - rows)})"
                )

            await until(table_is_the_alert, 15, left_as)
            assert w.model.rowCount() >= 24
            assert {w.model.event_at(r).type for r in range(w.model.rowCount())} == {"user.deleted"}
            chip = w.filter_bar.alert_chip
            assert chip.isVisible() and chip.text().startswith("alert: Mass deletion")
            assert w.filter_bar.search.text() == "" and w.filter_bar.selected_types() == frozenset()
            assert w.filter_bar.current().query == f"alert:{mass.alert.id}"
            # the query line still narrows within the alert
            w.filter_bar.search.setText("-type:user.created")
            w.filter_bar.search.returnPressed.emit()
            assert w.filter_bar.current().query == f"alert:{mass.alert.id} (-type:user.created)"
            w.filter_bar.search.clear()
            w.filter_bar.search.returnPressed.emit()
            await until(table_is_the_alert, 15, "still the alert's events")
            shot(w, "alert-chip-light")
            # removing the chip shows every event again
            QTest.mouseClick(chip, Qt.MouseButton.LeftButton)
            assert not chip.isVisible() and w.filter_bar.current().query == ""
            await until(lambda: w.model.rowCount() > 24 and not w.model.counting, 15, "every event again")

            await asyncio.to_thread(sim.scenario, "org_connection", action="added")
            await until(
                lambda: any(e.alert.rule_id == "org-connection" for e in book.entries()), 20, "a new alert"
            )
            await until(lambda: inbox.model.rowCount() == 3, 5, "its row in the open inbox")
            listed = [inbox.model.entry(r).alert.rule_id for r in range(inbox.model.rowCount())]
            assert listed == ["org-connection", "mass-deletion", "org-deleted"], listed
            assert alerts.unread == 1
            inbox.mark_all_button.click()
            assert alerts.unread == 0 and not inbox.mark_all_button.isEnabled()
            inbox.close()

    run_async(qloop, scenario(), timeout=150)
    for v in _visits:
        v.cancel()
