"""The inbox as a window of its own, in the real app on the demo tenant with dunst, under openbox and without a
window manager: the main window can cover it ("Show these events in the table" brings the table to the front over
it), and reopening it on the alert it was left on, after new alerts came in meanwhile, shows that alert, opened,
and triage acts on it."""

from __future__ import annotations

import asyncio

import pytest

from helpers.demo_window import (
    INCIDENTS,
    QUIET_DEMO_ARGS,
    act_out,
    click,
    demo_app,
    demo_window,
    pointer_to,
)
from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, save_screenshot, until
from helpers.fixtures_window_manager import above, transient_for, user_activates
from tenant_events.store.alert_triage import AlertTriage

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


async def first_alerts(app, n: int = 1):
    await until(lambda: len(app.alerts.book.entries()) >= n, 60, f"{n} alert(s) raised")


@pytest.mark.parametrize("window_manager", ["openbox", "none"], indirect=True)
def test_the_main_window_can_cover_the_inbox(qloop, ui_paths, dunst, window_manager):
    async def scenario() -> None:
        async with demo_app(ui_paths) as app:
            w = await demo_window(app)
            await pointer_to(w, None)
            await act_out(app, "admin_grant", to="member")
            await first_alerts(app)
            inbox = app.alerts.open_inbox()
            await until(inbox.isActiveWindow, 10, "the inbox active")
            assert (
                inbox.parent() is None and transient_for(int(inbox.winId())) == ""
            )  # not kept above anything
            await until(lambda: above(inbox, w), 10, "the inbox in front as it opens")

            # "Show these events in the table": the table comes to the front, over the inbox
            click(inbox.table.viewport(), inbox.table.visualRect(inbox.model.index(0, 1)).center())
            assert inbox.current() is not None
            inbox.table_button.click()
            await until(w.isActiveWindow, 10, "the main window active")
            await until(lambda: above(w, inbox), 10, "the main window over the inbox")
            assert inbox.isVisible()  # behind it, not closed

            # either one comes to the front when the user picks it
            user_activates(inbox)
            await until(lambda: inbox.isActiveWindow() and above(inbox, w), 10, "the inbox in front again")
            user_activates(w)
            await until(lambda: w.isActiveWindow() and above(w, inbox), 10, "the main window in front again")

    run_async(qloop, scenario(), timeout=200)


@pytest.mark.parametrize("window_manager", ["openbox", "none"], indirect=True)
def test_triage_on_the_alert_the_inbox_reopens_on(qloop, ui_paths, dunst, window_manager):
    async def scenario() -> None:
        async with demo_app(ui_paths, QUIET_DEMO_ARGS) as app:
            w = await demo_window(app, rows=20)
            await pointer_to(w, None)
            await act_out(app, "admin_grant", to="member")
            await until(
                lambda: any(e.alert.rule_name == "Admin role assigned" for e in app.alerts.book.entries()),
                60,
                "the admin role's alert",
            )
            inbox = app.alerts.open_inbox()
            await until(inbox.isActiveWindow, 10, "the inbox active")
            # the user opens the alert of that admin role (a quiet one: the clock's "outside working hours" alert
            # may grow all the time), then closes the inbox (Escape)
            row = next(
                r for r, e in enumerate(inbox.model.entries) if e.alert.rule_name == "Admin role assigned"
            )
            click(inbox.table.viewport(), inbox.table.visualRect(inbox.model.index(row, 1)).center())
            left_on = inbox.current()
            assert left_on is not None and left_on.alert.rule_name == "Admin role assigned"
            assert inbox.triage.entry == left_on
            inbox.reject()
            await until(lambda: not inbox.isVisible(), 10, "the inbox closed")

            # meanwhile more alerts come in above it than the inbox had rows below it (it is hidden: not
            # reloaded, its rows' pixels stay those of the shorter list), and the alert left on grows
            count = inbox.model.rowCount()
            await act_out(app, "admin_grant", to="member")
            for kind, options in INCIDENTS:
                if len(app.alerts.book.entries()) >= count + 3:
                    break
                await act_out(app, kind, **options)
                await until(lambda c=count: len(app.alerts.book.entries()) > c, 60, f"the alert of {kind}")
            grown = app.alerts.book.get(left_on.profile, left_on.alert.id)
            assert grown is not None and grown.alert.event_count > left_on.alert.event_count

            # reopened (the Alerts button): the same alert, shown, opened (read), and the one triage acts on
            inbox = app.alerts.open_inbox()
            shown = inbox.current()
            assert shown is not None and (shown.profile, shown.alert.id) == (
                left_on.profile,
                left_on.alert.id,
            )
            assert app.alerts.book.get(shown.profile, shown.alert.id).alert.read  # opened as it showed again
            assert inbox.table.selectionModel().selectedRows()[0].row() == inbox.model.row_of(
                shown.profile, shown.alert.id
            )
            assert inbox.model.row_of(shown.profile, shown.alert.id) > row  # newer ones above it now
            assert inbox.triage.entry is not None and inbox.triage.entry.alert.id == shown.alert.id
            await until(inbox.isActiveWindow, 10, "the inbox active again")
            save_screenshot(inbox, f"inbox-reopened-{window_manager}")
            inbox.triage.note.setText("looking into it")
            inbox.triage.buttons["acknowledged"].click()
            await asyncio.sleep(0)
            with AlertTriage(app.paths.database_file(shown.profile)) as triage:
                history = triage.history(shown.alert.id)
            assert [(t.state, t.note) for t in history] == [("acknowledged", "looking into it")]
            assert inbox.triage.state.text().startswith("acknowledged by ")
            assert inbox.current() is not None and inbox.current().alert.id == shown.alert.id

    run_async(qloop, scenario(), timeout=240)
