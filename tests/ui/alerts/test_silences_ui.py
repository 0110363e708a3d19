"""Silences and exceptions from an alert, in the real app with a real simulator and dunst: "Quiet this ▸
Silence this rule for 1 hour" keeps the alert listed, dimmed and marked silenced, and the rule's next firing is
stored but not notified; "until…" opens the silence dialog; Settings ▸ Silences lists who silenced what and
lifts it; "Never for <group>" writes the group as an exception of the rule into the settings file."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

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
from tenant_events.alert_settings import WEEKDAYS, AlertSettings, WorkingHours
from tenant_events.alerts.from_settings import rule_set
from tenant_events.auth.secret_store import MemorySecretStore
from tenant_events.settings import Settings, load_settings, save_settings
from tenant_events.ui.alerts.inbox_model import DIMMED, Col
from tenant_events.ui.alerts.silences_page import SilencesPage

pytestmark = [pytest.mark.gui, pytest.mark.dbus, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]
AROUND_THE_CLOCK = WorkingHours(start="00:00", end="00:00", days=list(WEEKDAYS))
_visits: list[asyncio.Future[str]] = []


def browser(url: str) -> None:
    _visits.append(asyncio.ensure_future(asyncio.to_thread(act_as_browser, url)))


def test_silence_from_an_alert_dims_it_and_holds_the_next_notification(
    qloop, ui_paths, make_simulator, dunst
):
    sim = make_simulator(seed=6, backlog=0, rate=2.0, heartbeat=0.2)
    quiet = [{"id": r, "enabled": False} for r in ("mass-deletion-by-actor", "signup-burst", "off-hours")]
    quiet += EVERY_CONNECTION_CHANGE  # (the simulator's organizations are new: their connections are set-up)
    save_settings(ui_paths, Settings(alerts=AlertSettings(working_hours=AROUND_THE_CLOCK, rules=quiet)))

    async def scenario() -> None:
        async with running_app(ui_paths, opener=browser, secret_store=MemorySecretStore()) as app:
            alerts = app.alerts
            said: list[str] = []
            alerts.notes.shown.connect(lambda _tenant, planned: said.append(planned.title))
            session = await app.add_tenant(profile_for(sim, "acme"))
            await until(lambda: session.status.state.value == "live", 30, "live")
            await asyncio.to_thread(sim.scenario, "org_connection", action="added")
            book = alerts.book
            await until(lambda: any(e.alert.rule_id == "org-connection" for e in book.entries()), 20, "alert")
            await until(lambda: any(t.startswith("Organization connection") for t in said), 10, "its popup")
            inbox = alerts.open_inbox("", 0)
            first = next(e for e in book.entries() if e.alert.rule_id == "org-connection")
            assert inbox.open_alert(first.profile, first.alert.id)
            menu = inbox.quiet.menu_
            labels = [a.text() for a in menu.actions() if a.text()]
            group = first.alert.rule_name.partition(" · ")[2]
            assert labels == ["Silence this &rule", "Silence this &group", f"&Never for {group}…"]

            # "until…": the dialog, with what it silences
            rule_menu = menu.actions()[0].menu()
            [until_action] = [a for a in rule_menu.actions() if a.text() == "until…"]
            until_action.trigger()
            dialog = alerts.quiet.dialog
            assert dialog is not None and dialog.isVisible()
            assert dialog.what.text() == "Organization connection changed (every group) · acme"
            dialog.comment.setText("onboarding Acme this afternoon")
            save_screenshot(dialog, "silence-dialog")
            dialog.accept()
            await until(lambda: bool(alerts.silences.active()), 5, "the silence kept")
            [silence] = alerts.silences.active()
            assert silence.rule == "org-connection" and silence.tenant == "acme"
            assert (
                silence.comment == "onboarding Acme this afternoon"
                and silence.ends_at - silence.starts_at > 3.5 * 3600
            )

            # the alert stays listed, dimmed and marked
            await until(lambda: inbox.model.rowCount() >= 1, 5, "the row")
            row = inbox.model.row_of(first.profile, first.alert.id)
            assert row is not None
            state = inbox.model.index(row, Col.STATE).data()
            assert state.endswith("· silenced"), state
            color = inbox.model.index(row, Col.ALERT).data(Qt.ItemDataRole.ForegroundRole)
            assert isinstance(color, QColor) and color.name() in DIMMED
            assert "Silenced: rule org-connection, tenant acme" in inbox.model.index(row, Col.ALERT).data(
                Qt.ItemDataRole.ToolTipRole
            )
            inbox.resize(1300, 700)
            inbox.table.clearSelection()  # (a selected row is drawn in the selection's colours)
            save_screenshot(inbox, "inbox-silenced-alert")

            # the rule fires again: stored, listed, not said
            before = len(said)
            count = len([e for e in book.entries() if e.alert.rule_id == "org-connection"])
            await asyncio.to_thread(sim.scenario, "org_connection", action="added")
            await until(
                lambda: (
                    sum(e.alert.occurrences for e in book.entries() if e.alert.rule_id == "org-connection")
                    > count
                ),
                20,
                "the next firing stored",
            )
            await asyncio.sleep(1.0)  # (a notification would be planned in the same step)
            assert not [t for t in said[before:] if t.startswith("Organization connection")]

            # Settings ▸ Silences lists it with who and why, and lifts it
            page = SilencesPage(alerts.silence_keeper)
            page.resize(900, 300)
            page.show()
            assert page.table.rowCount() == 1
            assert [page.table.item(0, c).text() for c in (0, 2, 3)] == [
                "rule org-connection, tenant acme",
                silence.author,
                "onboarding Acme this afternoon",
            ]
            save_screenshot(page, "settings-silences")
            page.table.selectRow(0)
            assert page.lift_button.isEnabled()
            drawn: list[tuple[int, int]] = []  # the inbox's rows drawn again (dimmed or not)
            inbox.model.dataChanged.connect(lambda a, b, *_: drawn.append((a.row(), b.row())))
            page.lift_button.click()
            await until(lambda: page.table.item(0, 1).text().startswith("ended "), 5, "the lift listed")
            assert alerts.silences.active() == []
            # the inbox, left as it was, draws its rows undimmed at once (not at its next reload)
            last = inbox.model.rowCount() - 1
            await until(lambda: (0, last) in drawn, 5, "the inbox's rows drawn again")
            row = inbox.model.row_of(first.profile, first.alert.id)
            assert row is not None and not inbox.model.index(row, Col.STATE).data().endswith("silenced")
            page.close()

            # "Never for <group>": the group becomes an exception of the rule in the settings file
            alerts.quiet.confirm = lambda _parent, question: group in question
            task = alerts.quiet.never_for(first)
            assert task is not None and await task is True
            rule = rule_set(load_settings(ui_paths).alerts).get("org-connection")
            assert rule is not None
            [exception] = rule.except_
            assert exception.conditions[0].field == "object.organization.id"
            assert exception.conditions[0].value == [first.alert.group_key]
            inbox.close()

    run_async(qloop, scenario(), timeout=150)
