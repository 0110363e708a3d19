"""Screenshots of the alert pieces in both themes, made from the real app on real alerts (a real simulator's
incidents): the inbox, an alert notification as dunst shows it (the X screen grabbed), the tray menu while
do-not-disturb holds notifications. Checked for the things that read badly when they break."""

from __future__ import annotations

import asyncio
import re
import subprocess

import pytest
from PySide6.QtGui import QImage

from helpers.alert_events import EVERY_CONNECTION_CHANGE
from helpers.browser import act_as_browser
from helpers.fixtures_ui import (
    QT_OFFSCREEN_NOISE,
    SCREENSHOTS,
    dunst_displayed,
    profile_for,
    run_async,
    running_app,
    save_screenshot,
    until,
)
from tenant_events.alert_settings import WEEKDAYS, AlertSettings, WorkingHours
from tenant_events.auth.secret_store import MemorySecretStore
from tenant_events.settings import Settings, save_settings

pytestmark = [pytest.mark.gui, pytest.mark.dbus, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]
# one alert per incident here: the per-actor mass deletion rule off, and "member added to an admin group" (routine
# traffic adding members to the group an admin grant just went to raises it at a time of its own)
ONE_PER_INCIDENT = [
    {"id": "mass-deletion-by-actor", "enabled": False},
    {"id": "admin-group-member", "enabled": False},
    *EVERY_CONNECTION_CHANGE,
]
AROUND_THE_CLOCK = WorkingHours(start="00:00", end="00:00", days=list(WEEKDAYS))
_visits: list[asyncio.Future[str]] = []


def browser(url: str) -> None:
    _visits.append(asyncio.ensure_future(asyncio.to_thread(act_as_browser, url)))


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_alert_screenshots(qloop, ui_paths, make_simulator, dunst, tray_host, theme):
    sim = make_simulator(seed=11, backlog=0, rate=2.0, heartbeat=0.2)
    save_settings(
        ui_paths,
        Settings(theme=theme, alerts=AlertSettings(working_hours=AROUND_THE_CLOCK, rules=ONE_PER_INCIDENT)),
    )

    async def scenario() -> None:
        async with running_app(ui_paths, opener=browser, secret_store=MemorySecretStore()) as app:
            alerts, tray = app.alerts, app.tray
            assert tray is not None and app.tray_wiring.alert_menu is not None
            delivered: list[str] = []
            app.notifier.delivered.connect(lambda title, _how: delivered.append(title))
            session = await app.add_tenant(profile_for(sim, "acme"))
            await until(lambda: session.status.state.value == "live", 30, "live")
            await asyncio.to_thread(subprocess.run, ["dunstctl", "close-all"], check=True)
            await until(lambda: dunst_displayed() == 0, 10, "dunst cleared")
            await asyncio.to_thread(sim.scenario, "org_connection", action="removed")
            await until(lambda: alerts.unread == 1, 20, "the first alert")
            await asyncio.to_thread(sim.scenario, "mass_deletion", n=30, over_s=2)
            await until(lambda: alerts.unread == 2 and "Mass deletion" in delivered, 20, "the mass deletion")
            await until(lambda: dunst_displayed() >= 1, 10, "dunst showing it")
            await asyncio.sleep(0.5)  # dunst draws
            if theme == "light":  # dunst looks the same in both
                shot = SCREENSHOTS / "alert-notification-dunst.png"
                await asyncio.to_thread(
                    subprocess.run,
                    ["import", "-window", "root", "-crop", "640x260+640+0", str(shot)],
                    check=True,
                )
                image = QImage(str(shot))
                assert not image.isNull() and image.width() == 640

            # a grouped alert names its group as the directory knows it: the user's e-mail, not their id
            await asyncio.to_thread(sim.scenario, "temporary_elevation", over_s=2)

            def elevations():
                return [e.alert for e in alerts.book.entries() if e.alert.rule_id == "temporary-elevation"]

            await until(
                lambda: elevations(), 30, "the temporary elevation"
            )  # after its "admin role assigned"
            [elevation] = elevations()
            route = next(e.alert for e in alerts.book.entries() if e.alert.rule_id == "org-connection")
            assert re.search(r" · organization [A-Z][a-z]+ [A-Z]", route.rule_name), (
                route.rule_name
            )  # display name
            assert re.fullmatch(
                r"Temporary elevation · user \S+@example\.com, role \w+", elevation.rule_name
            ), elevation.rule_name

            inbox = alerts.open_inbox()
            inbox.table.selectRow(2)  # the mass deletion, under the elevation and its grant
            assert inbox.event_list.count() >= 20
            inbox.resize(1600, 760)
            save_screenshot(inbox, f"alerts-inbox-{theme}")

            next(a for a in tray.notify_menu.actions() if a.text() == "Do not disturb for 1 hour").trigger()
            assert app.tray_wiring.alert_menu.mute_action.isVisible()
            tray.menu.resize(tray.menu.sizeHint())
            save_screenshot(tray.menu, f"tray-menu-muted-{theme}")
            app.tray_wiring.alert_menu.menu.resize(app.tray_wiring.alert_menu.menu.sizeHint())
            save_screenshot(app.tray_wiring.alert_menu.menu, f"tray-recent-alerts-{theme}")
            inbox.close()

    run_async(qloop, scenario(), timeout=120)
    for v in _visits:
        v.cancel()
