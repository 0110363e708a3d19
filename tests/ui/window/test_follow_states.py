"""The follow states in the real app on the demo tenant, with a window manager (openbox) and without one: the window
hidden to the tray and shown, minimized and restored, left for another window and activated again, while
following (everything seen once looked at again) and while reading (only what was on screen); a zoom into a range
that ended (Follow off and saying why, N to the range's newest) and back; a window that opens under the pointer."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from PySide6.QtCore import QAbstractEventDispatcher, QPoint
from PySide6.QtGui import QCursor
from PySide6.QtWidgets import QWidget

from helpers.demo_window import demo_app, demo_window, pointer_to
from helpers.fixtures_ui import (
    QT_OFFSCREEN_NOISE,
    run_async,
    save_screenshot,
    signal_future,
    until,
)
from helpers.fixtures_window_manager import user_activates, user_minimizes
from tenant_events.ui.look.theme import apply_theme
from tenant_events.view.follow_state import PAST_SAY, Mode

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


async def window_system_told() -> None:
    """Until Qt's loop has gone idle once: what the app asked of the window system (the activation Qt defers
    until a shown window is mapped) is sent then, and a person acts after it, not before it (a late activation
    would make the manager restore a window just minimized)."""
    dispatcher = QAbstractEventDispatcher.instance()
    idle: list[bool] = []

    def went_idle() -> None:
        idle.append(True)

    dispatcher.aboutToBlock.connect(went_idle)
    try:
        await until(lambda: idle, 10, "Qt's loop idle once")
    finally:
        dispatcher.aboutToBlock.disconnect(went_idle)  # only this one: Qt's own flush stays connected


@pytest.mark.parametrize("window_manager", ["openbox", "none"], indirect=True)
def test_hidden_shown_minimized_and_another_window_while_following_and_reading(
    qloop, ui_paths, dunst, tray_host, window_manager
):
    async def scenario() -> None:
        async with demo_app(ui_paths) as app:
            w = await demo_window(app)
            follow, bar = w.follow, w.table.verticalScrollBar()
            await pointer_to(w, None)
            await until(lambda: w.unread == 0, 10, "everything seen while following")

            async def away_and_back(leave, come_back, what: str) -> int:
                await window_system_told()
                leave()
                await until(lambda: not follow.state.looking, 10, f"{what}: not looked at")
                start = w.unread
                await until(lambda: w.unread >= start + 3, 20, f"{what}: rows arriving unseen")
                count = w.unread
                assert w.windowTitle() == f"Tenant Events ({count:,} new)"
                # the tray says it in the same word; "unread" is only the alerts' word
                tip = app.tray.icon.toolTip().splitlines()
                assert tip[0] == f"Tenant Events — {w.unread:,} new events"
                alerts = app.alerts.unread
                assert (f"{alerts} unread alert{'' if alerts == 1 else 's'}" in tip) == bool(alerts)
                come_back()
                await until(lambda: follow.state.looking, 10, f"{what}: looked at again")
                return count

            # following: whatever arrived while away is seen once the window is looked at again (the title and
            # the tray clear), however far below the view those rows went
            for leave, what in ((w.hide, "hidden to the tray"), (lambda: user_minimizes(w), "minimized")):
                await away_and_back(leave, lambda: user_activates(w), what)
                await until(lambda: w.unread == 0, 10, f"{what}: all seen")
                assert follow.following and bar.value() == 0 and w.windowTitle() == "Tenant Events"
            other = QWidget()
            other.setWindowTitle("Another window")
            other.resize(300, 200)
            try:
                other.show()
                await away_and_back(
                    lambda: user_activates(other), lambda: user_activates(w), "another window active"
                )
                await until(lambda: w.unread == 0, 10, "another window: all seen")
                assert follow.following

                # reading (scrolled down): rows that arrived while away stay new; only the rows on screen count
                for _ in range(3):
                    bar.triggerAction(bar.SliderAction.SliderPageStepAdd)
                assert not follow.following
                await signal_future(w.model.rows_arrived, 20)
                count = await away_and_back(
                    lambda: user_activates(other), lambda: user_activates(w), "reading, another window"
                )
                assert (
                    follow.state.mode is Mode.READING and w.unread >= count
                )  # above the view: not on screen
                assert follow.pill.isVisible()
                follow.jump_to_newest()
                assert w.unread == 0 and follow.following
            finally:
                other.close()
                other.deleteLater()

    run_async(qloop, scenario(), timeout=240)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_a_zoom_into_a_range_that_ended_turns_follow_off_and_says_why(qapp, qloop, ui_paths, theme):
    async def scenario() -> None:
        async with demo_app(ui_paths) as app:
            w = await demo_window(app)
            apply_theme(qapp, theme)  # (the app applied its own setting as it started)
            follow, action, bar = w.follow, w.menu_actions.follow, w.table.verticalScrollBar()
            await pointer_to(w, None)
            newest = w.model.event_at(0)
            assert newest is not None and follow.following and action.isChecked()

            # a zoom into the minute before the newest event: a range that has ended
            end = datetime.fromisoformat(newest.time.replace("Z", "+00:00")) - timedelta(seconds=1)
            w.zoom.zoom_to(end - timedelta(minutes=5), end)
            await until(lambda: follow.mode is Mode.PAST and not w.model.counting, 15, "the past range")
            assert not action.isChecked() and "No new events arrive" in action.toolTip()
            assert w.model.rowCount() > 0
            head = w.model.head
            # F: Follow stays off and the window says why
            action.trigger()
            assert not action.isChecked() and follow.mode is Mode.PAST
            assert w.toast.isVisible() and w.toast.text() == PAST_SAY
            save_screenshot(w, f"follow-past-range-{theme}")
            # N: the range's newest row, nothing to follow
            bar.triggerAction(bar.SliderAction.SliderPageStepAdd)
            next(a for a in w.menu_actions.all if a.text() == "Jump to &newest").trigger()
            assert bar.value() == 0 and follow.mode is Mode.PAST
            # new events do not enter it
            await signal_future(w.feed.w.aggregates_updated, 20)
            assert w.unread == 0 and not follow.pill.isVisible()
            # leaving the zoom follows the newest again
            w.zoom.reset()
            await until(lambda: follow.following and w.model.head > head, 15, "the live range")
            assert action.isChecked() and bar.value() == 0 and datetime.now(UTC) > end

    try:
        run_async(qloop, scenario(), timeout=200)
    finally:
        apply_theme(qapp, "light")


@pytest.mark.parametrize("window_manager", ["openbox"], indirect=True)
def test_a_window_opened_under_the_pointer_follows_and_counts_nothing_new(
    qloop, ui_paths, dunst, tray_host, window_manager
):
    """The pointer rests where the window opens, before its first rows: rows that come in under a pointer nobody
    moved hold nothing, so the backlog and what follows it come in newest first (not the oldest rows in view with
    every other row "new" above them, the count climbing). Once the user moves the pointer on the rows it holds
    them: rows arriving wait above (the pill counts them), and in a window followed and looked at none of them is
    "new" in the title or the tray."""

    async def scenario() -> None:
        QCursor.setPos(QPoint(400, 300))  # where the window appears: on its rows once they come
        async with demo_app(ui_paths) as app:
            w = app.window
            follow, bar, table = w.follow, w.table.verticalScrollBar(), w.table

            def looked_at_and_nothing_new() -> None:
                assert follow.following and follow.state.looking
                assert w.unread == 0 and w.windowTitle() == "Tenant Events"
                assert "new events" not in app.tray.icon.toolTip()

            await until(lambda: w.model.rowCount() >= 300, 60, "the backlog")
            await until(lambda: follow.state.looking, 10, "the window looked at")
            for _ in range(3):
                await signal_future(w.model.rows_arrived, 20)
                looked_at_and_nothing_new()
                assert (
                    not follow.held and bar.value() == 0 and not follow.pill.isVisible()
                )  # the newest in view
            assert table.viewport().rect().contains(table.viewport().mapFromGlobal(QCursor.pos()))
            save_screenshot(w, "follow-opened-under-the-pointer")

            # the user moves the pointer on the rows: they hold still, the newest wait above
            await pointer_to(table.viewport(), QPoint(200, 60))
            await until(lambda: follow.held, 10, "the pointer put on the rows")
            for _ in range(3):
                await signal_future(w.model.rows_arrived, 20)
                looked_at_and_nothing_new()
            assert follow.pill.isVisible() and follow.pill.shown == follow.visible_rows()[0] > 0
            # the pointer leaves: the rows that waited come into view
            await pointer_to(w, None)
            await until(lambda: not follow.held, 10, "the pointer gone")
            assert bar.value() == 0 and w.unread == 0 and not follow.pill.isVisible()

    run_async(qloop, scenario(), timeout=200)
