"""Do-not-disturb and quiet hours made visible and editable: the tray's menu line with the time they end, its
tooltip line and icon badge; Settings' quiet hours (from–to, days, critical alerts let through) refuse a choice
that cannot work next to the field and keep the saved one. The app runs for real: a real simulator's incidents,
dunst receiving (or not) the Notify calls, trayer as the tray host."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timedelta
from typing import Any

import pytest
from PySide6.QtCore import QTime

from helpers.alert_events import EVERY_CONNECTION_CHANGE
from helpers.browser import act_as_browser
from helpers.fixtures_ui import (
    QT_OFFSCREEN_NOISE,
    profile_for,
    run_async,
    running_app,
    save_screenshot,
    until,
)
from helpers.notify_watch import NotifyWatch
from tenant_events.alert_settings import WEEKDAYS, AlertSettings, WorkingHours
from tenant_events.auth.secret_store import MemorySecretStore
from tenant_events.settings import NotificationSettings, Settings, load_settings, save_settings
from tenant_events.ui.alerts.per_type_rule import chosen_types
from tenant_events.ui.settings.settings_dialog import SettingsDialog

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]
# One alert per incident, and none from routine traffic (tests/alerts cover these rules). Off: the per-actor mass
# deletion rule; "member added to an admin group", "temporary elevation" and "admin group deleted" (routine traffic
# adding members to the group an admin grant just went to, taking that role away again or deleting the group raises
# them at times of their own: a third unread alert where this test counts two, or one evaluated in the same step as
# the grant's, so the count goes from 0 to 2); the sign-up burst (at 4 events a second, sign-ups cross 60 a minute
# at times). A fresh simulator's organizations are new, so the connection its scenario adds would be set-up traffic
# (the onboarding rule's info alert): every connection change is the warning here, the one quiet hours must hold.
ONE_PER_INCIDENT = [
    {"id": "mass-deletion-by-actor", "enabled": False},
    {"id": "admin-group-member", "enabled": False},
    {"id": "temporary-elevation", "enabled": False},
    {"id": "admin-group-deleted", "enabled": False},
    {"id": "signup-burst", "enabled": False},
    *EVERY_CONNECTION_CHANGE,
]
AROUND_THE_CLOCK = WorkingHours(start="00:00", end="00:00", days=list(WEEKDAYS))
_visits: list[asyncio.Future[str]] = []


def browser(url: str) -> None:
    _visits.append(asyncio.ensure_future(asyncio.to_thread(act_as_browser, url)))


def _alerts_seen(alerts: Any) -> list[tuple[str, int, bool, bool]]:
    """Each alert in the inbox as (rule, events, catch-up, notify): what a timed-out wait was left with."""
    return [
        (e.alert.rule_id, e.alert.event_count, e.alert.catch_up, e.alert.notify)
        for e in alerts.book.entries()
    ]


def test_quiet_hours_fields_refuse_what_cannot_work(qtbot):
    d = SettingsDialog(Settings(), set())
    qtbot.addWidget(d)
    d.show()
    d.tabs.setCurrentIndex(1)
    box = d.quiet
    assert not box.isChecked() and not box.problem.isVisible()
    box.setChecked(True)
    box.start.setTime(QTime(9, 0))
    box.end.setTime(QTime(9, 0))
    emitted: list[Settings] = []
    d.settings_changed.connect(emitted.append)
    assert d.apply() is False and emitted == []
    assert box.problem.isVisible() and "same time" in box.problem.text()
    box.end.setTime(QTime(7, 0))
    box.start.setTime(QTime(22, 0))
    for day in ("sat", "sun", "mon", "tue", "wed", "thu", "fri"):
        box.days[day].setChecked(False)
    assert d.apply() is False and "at least one day" in box.problem.text()
    box.days["fri"].setChecked(True)
    box.days["sat"].setChecked(True)
    box.critical.setChecked(True)
    d.per_type.setChecked(True)
    assert d.apply() is True and not box.problem.isVisible()
    n = emitted[-1].notifications
    assert n.quiet_hours == ("22:00", "07:00") and n.quiet_days == ["fri", "sat"] and n.critical_passes_dnd
    entry = next(e for e in emitted[-1].alerts.rules if e["id"] == "event-types")
    assert entry["enabled"] is True and entry["types"]
    save_screenshot(d, "settings-quiet-hours")


def _hhmm(moment: datetime) -> str:
    return moment.strftime("%H:%M")


def test_dnd_and_quiet_hours_on_the_tray(qloop, ui_paths, make_simulator, dunst, tray_host):
    sim = make_simulator(seed=7, backlog=0, rate=4.0, heartbeat=0.2)
    save_settings(
        ui_paths, Settings(alerts=AlertSettings(working_hours=AROUND_THE_CLOCK, rules=ONE_PER_INCIDENT))
    )

    async def scenario() -> None:
        with NotifyWatch() as watch:
            async with running_app(ui_paths, opener=browser, secret_store=MemorySecretStore()) as app:
                tray, alerts = app.tray, app.alerts
                assert tray is not None and app.tray_wiring.alert_menu is not None
                mute_line = app.tray_wiring.alert_menu.mute_action
                assert not mute_line.isVisible() and not tray.muted
                # the tray's per-type ticks are the opt-in per-type rule: off by default, on with a tick
                assert not any(a.isChecked() for a in tray.type_actions.values())
                tray.type_actions["group.created"].setChecked(True)
                assert chosen_types(app.settings.alerts) == {"group.created"}
                tray.type_actions["group.created"].setChecked(False)
                assert chosen_types(app.settings.alerts) == set()
                session = await app.add_tenant(profile_for(sim, "acme"))
                await until(lambda: session.status.state.value == "live", 30, "live")

                # do not disturb for an hour, from the tray's Notifications menu
                dnd = next(a for a in tray.notify_menu.actions() if a.text() == "Do not disturb for 1 hour")
                clicked = time.time()
                dnd.trigger()
                # an hour from the click, said as the minute it ends in (which may turn while the click is handled)
                ends_at = alerts.mute.until
                assert ends_at is not None and clicked + 3600 <= ends_at <= time.time() + 3600
                ends = _hhmm(datetime.fromtimestamp(ends_at))
                assert mute_line.isVisible() and mute_line.text() == f"Do not disturb until {ends} — turn off"
                assert (
                    tray.muted
                    and f"Do not disturb until {ends} (alerts are still kept)" in tray.icon.toolTip()
                )
                await until(
                    lambda: load_settings(ui_paths).notifications.do_not_disturb_until is not None, 5, "saved"
                )
                await asyncio.to_thread(sim.scenario, "admin_grant", to="group")
                await until(
                    lambda: alerts.unread == 1,
                    20,
                    lambda: (
                        f"the alert, kept while muted; unread {alerts.unread}, alerts {_alerts_seen(alerts)}"
                    ),
                )
                await asyncio.sleep(0.5)
                assert watch.of("Admin role assigned") == []  # held: critical alerts are not let through
                assert tray.unread == 1 and "1 unread alert" in tray.icon.toolTip()

                mute_line.trigger()  # "— turn off"
                assert not mute_line.isVisible() and not tray.muted
                assert "Do not disturb" not in tray.icon.toolTip()

                # quiet hours around now, critical alerts let through: the warning waits, the critical one shows
                now = datetime.now()
                s = app.settings.model_copy(deep=True)
                s.notifications = NotificationSettings(
                    quiet_hours=(_hhmm(now - timedelta(minutes=30)), _hhmm(now + timedelta(minutes=90))),
                    critical_passes_dnd=True,
                )
                await app.apply_settings(s)
                ends = _hhmm(now + timedelta(minutes=90))
                assert mute_line.text() == f"Quiet hours until {ends}" and not mute_line.isEnabled()
                assert tray.muted and f"Quiet hours until {ends}" in tray.icon.toolTip()
                await asyncio.to_thread(sim.scenario, "org_connection", action="added")
                await until(lambda: alerts.unread == 2, 20, "the warning, kept")
                await asyncio.to_thread(sim.scenario, "mass_deletion", n=22, over_s=1)
                await until(
                    lambda: watch.of("Mass deletion"),
                    20,
                    lambda: (
                        f"the critical alert let through; alerts {_alerts_seen(alerts)}, "
                        f"notifications {[n.summary for n in watch.seen]}"
                    ),
                )
                assert watch.of("Mass deletion")[0].urgency == "critical"
                await asyncio.sleep(0.5)
                assert watch.of("Organization connection changed") == []
                tray.menu.resize(tray.menu.sizeHint())
                save_screenshot(tray.menu, "tray-menu-muted")
                icon = tray.icon.icon().pixmap(64, 64)
                assert not icon.isNull()
                assert icon.save(
                    str(save_screenshot(tray.menu, "tray-menu-muted").with_name("tray-icon-badges.png"))
                )

    run_async(qloop, scenario(), timeout=150)
    for v in _visits:
        v.cancel()
