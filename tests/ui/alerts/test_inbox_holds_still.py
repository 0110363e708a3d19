"""The inbox holds still under the reader, in the real app on the demo tenant with dunst and a window manager, as
the event table does: while the pointer rests on the list, new alerts do not move the row under it (the rows
listed are kept, a "↑ N new alerts" pill counts the others); once the pointer leaves they take their place by
latest activity. The same while an alert is selected and being read (the pointer on the inbox, off the list)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint

from helpers.demo_window import INCIDENTS, QUIET_DEMO_ARGS, act_out, click, demo_app, demo_window, pointer_to
from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, save_screenshot, until
from tenant_events.ui.look.theme import apply_theme

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


def keys(entries) -> list[tuple[str, int]]:
    return [(e.profile, e.alert.id) for e in entries]


async def more_alerts(app, incidents, at_least: int) -> None:
    """Act incidents out until the book holds `at_least` alerts."""
    book = app.alerts.book
    for kind, options in incidents:
        if len(book.entries()) >= at_least:
            return
        have = len(book.entries())
        await act_out(app, kind, **options)
        await until(lambda h=have: len(book.entries()) > h, 60, f"the alert of {kind}")
    assert len(book.entries()) >= at_least


@pytest.mark.parametrize("window_manager", ["openbox"], indirect=True)
@pytest.mark.parametrize("theme", ["light", "dark"])
def test_new_alerts_wait_while_the_pointer_rests_on_the_inbox_or_an_alert_is_read(
    qapp, qloop, ui_paths, dunst, window_manager, theme
):
    async def scenario() -> None:
        async with demo_app(ui_paths, QUIET_DEMO_ARGS) as app:
            apply_theme(qapp, theme)
            w = await demo_window(app, rows=20)
            await pointer_to(w, None)
            book = app.alerts.book
            await act_out(app, "admin_grant", to="member")
            await more_alerts(app, INCIDENTS[:2], 2)
            inbox = app.alerts.open_inbox()
            await until(inbox.isActiveWindow, 10, "the inbox active")
            model, table, pill = inbox.model, inbox.table, inbox.hold.pill
            opened = [e.alert.fired_at for e in model.entries]
            assert opened == sorted(
                opened, reverse=True
            )  # by latest activity (an alert may fire again meanwhile)

            # the pointer rests on the second row: new alerts do not move it, the pill counts them
            pos = table.visualRect(model.index(1, 1)).center()
            await pointer_to(table.viewport(), pos)
            under = keys([model.entry(table.indexAt(pos).row())])
            listed = keys(model.entries)
            placed = {(e.profile, e.alert.id): e.alert.fired_at for e in model.entries}
            await more_alerts(app, INCIDENTS[2:4], len(listed) + 2)
            await until(lambda: pill.isVisible(), 20, "the pill counting the waiting alerts")

            def counted() -> bool:  # every new alert on the pill, and every one that fired again to pass an
                # alert listed above it (not one firing again where it stands); every alert in the count
                now = {(e.profile, e.alert.id): e.alert.fired_at for e in book.entries()}
                above = {k: listed[: listed.index(k)] for k in listed}
                waiting = sum(
                    1
                    for k, at in now.items()
                    if k not in placed or (at > placed[k] and any(at > now.get(o, at) for o in above[k]))
                )
                return pill.text() == f"↑ {waiting} new alerts" and inbox.summary.text().endswith(
                    f"· {len(now)} alerts"
                )

            await until(counted, 20, "every new alert counted")
            assert keys(model.entries) == listed  # nothing moved, nothing went in
            assert keys([model.entry(table.indexAt(pos).row())]) == under
            save_screenshot(inbox, f"inbox-held-under-pointer-{theme}")

            # the pointer leaves: every alert in its place, by latest activity, the pill gone
            await pointer_to(w, None)
            # (an alert that keeps firing, the clock's "outside working hours", takes its place again each time)
            await until(
                lambda: not pill.isVisible() and keys(model.entries) == keys(book.entries()),
                20,
                "the waiting alerts placed",
            )
            fired = [e.alert.fired_at for e in model.entries]
            assert fired == sorted(fired, reverse=True)
            save_screenshot(inbox, f"inbox-placed-{theme}")

            # an alert selected and being read (the pointer on its events, off the list): nothing moves either
            inbox.activateWindow()
            await until(inbox.isActiveWindow, 10, "the inbox active again")
            read_row = model.rowCount() - 1  # the oldest: any new activity would move it
            click(table.viewport(), table.visualRect(model.index(read_row, 1)).center())
            reading = inbox.current()
            assert reading is not None
            events = inbox.event_list
            await pointer_to(events, QPoint(events.width() // 2, events.height() // 2))
            listed = keys(model.entries)
            await more_alerts(app, INCIDENTS[4:], len(listed) + 1)
            await until(lambda: pill.isVisible(), 20, "the pill while an alert is read")
            assert keys(model.entries) == listed
            assert table.selectionModel().selectedRows()[0].row() == read_row
            assert inbox.current() is not None and inbox.current().alert.id == reading.alert.id
            save_screenshot(inbox, f"inbox-held-while-reading-{theme}")

            # the pointer leaves the inbox: the alerts take their place, the one being read stays selected
            await pointer_to(w, None)
            await until(
                lambda: not pill.isVisible() and keys(model.entries) == keys(book.entries()),
                20,
                "placed once the pointer left",
            )
            assert inbox.current() is not None and inbox.current().alert.id == reading.alert.id

    try:
        run_async(qloop, scenario(), timeout=300)
    finally:
        apply_theme(qapp, "light")
