"""Reading while events arrive, on the real demo tenant (the simulator as a child process, signed in through its
login page): Follow keeps the newest in view and counts nothing as new; a picked row stays at its pixel while
new rows go in above it; the pill says how many arrived unseen and brings them into view."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QEnterEvent, QMouseEvent
from PySide6.QtWidgets import QApplication

from helpers.browser import act_as_browser
from helpers.fixtures_ui import (
    QT_OFFSCREEN_NOISE,
    run_async,
    running_app,
    signal_future,
    until,
)
from helpers.shots import shot
from tenant_events.auth.secret_store import MemorySecretStore

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]
DEMO_ARGS = ["--seed", "11", "--rate", "25", "--backlog", "300", "--heartbeat", "0.5", "--ephemeral"]
_visits: list[asyncio.Future[str]] = []


def browser(url: str) -> None:
    _visits.append(asyncio.ensure_future(asyncio.to_thread(act_as_browser, url)))


def click(widget, pos) -> None:
    """A left click delivered to the widget's event handlers now. (qtbot.mouseClick spins the event loop, which
    would re-enter the qasync loop from inside this test's coroutine.)"""
    for kind in (QEvent.Type.MouseButtonPress, QEvent.Type.MouseButtonRelease):
        event = QMouseEvent(
            kind,
            QPointF(pos),
            QPointF(widget.mapToGlobal(pos)),
            Qt.MouseButton.LeftButton,
            Qt.MouseButton.LeftButton if kind == QEvent.Type.MouseButtonPress else Qt.MouseButton.NoButton,
            Qt.KeyboardModifier.NoModifier,
        )
        QApplication.sendEvent(widget, event)


async def demo_window(app):
    """The demo signed in, its backlog in the table, the window 1600 × 900 and active."""
    w = app.window
    await until(lambda: "demo" in app.sessions and app.sessions["demo"].is_signed_in, 60, "sign-in")
    await until(lambda: w.tenant == "demo" and w.model.rowCount() >= 300, 30, "backlog rows")
    w.resize(1600, 900)
    w.bring_to_front()
    await until(w.isActiveWindow, 10, "the window active")
    return w


def test_follow_pill_and_the_row_being_read_stays_put(qloop, ui_paths):
    async def scenario() -> None:
        async with running_app(
            ui_paths, demo=True, opener=browser, secret_store=MemorySecretStore(), simulator_args=DEMO_ARGS
        ) as app:
            w = await demo_window(app)
            table, bar, follow = w.table, w.table.verticalScrollBar(), w.follow

            # the backlog arrived while the sign-in prompt had the focus: only the rows now on screen are seen
            first, last = follow.visible_rows()
            assert first == 0 and last > 10
            assert 0 < w.unread <= w.model.rowCount() - (last + 1)
            assert not follow.pill.isVisible()  # nothing unseen above the view
            for _ in range(100):  # reading down the table, a page at a time
                if bar.value() >= bar.maximum():
                    break
                bar.triggerAction(bar.SliderAction.SliderPageStepAdd)
            assert not follow.following  # the user scrolled
            assert follow.pill.isVisible() == (w.unread > 0)  # only what arrived meanwhile, above the view
            w.menu_actions.follow.trigger()  # View ▸ Follow newest events (F)
            assert follow.following and bar.value() == 0
            # Seen once the window is the active one: on a loaded desktop the activation can trail (the rows are
            # counted seen again on WindowActivate, follow.py), so wait for it rather than assume it
            await until(lambda: w.unread == 0, 10, "the rows at the top seen")

            # Follow on (the default): new rows keep arriving at the top, the view stays there, nothing is "new"
            assert follow.following and w.menu_actions.follow.isChecked()
            for _ in range(3):
                await signal_future(w.model.rows_arrived, 20)
                assert bar.value() == 0 and w.unread == 0 and w.windowTitle() == "Tenant Events"
                assert not follow.pill.isVisible()

            # the user clicks the 4th row: Follow stops; that row keeps its event and its pixel as rows arrive
            rect = table.visualRect(w.model.index(3, 1))
            click(table.viewport(), rect.center())
            assert not follow.following and not w.menu_actions.follow.isChecked()
            picked = w.model.event_at(table.currentIndex().row())
            assert picked is not None and w.detail.shown is not None and w.detail.shown.seq == picked.seq
            y = table.visualRect(table.currentIndex()).y()
            arrived = 0
            while arrived < 3:
                (n,) = await signal_future(w.model.rows_arrived, 20)
                arrived += n
                await asyncio.sleep(
                    0
                )  # a turn of the loop: the view's delayed layout runs, the pixels are final
                current = table.currentIndex()
                assert w.model.event_at(current.row()).seq == picked.seq  # type: ignore[union-attr]
                assert table.visualRect(current).y() == y, "the row being read moved"
            assert bar.value() == current.row() - 3  # scrolled down by exactly the rows inserted above
            assert w.unread == arrived and w.windowTitle() == f"Tenant Events ({arrived:,} new)"
            assert follow.pill.isVisible() and follow.pill.text() == f"↑ {arrived:,} new events"
            # over the column titles: the first row (the newest event) stays readable
            assert follow.pill.geometry().bottom() < table.viewport().geometry().top()
            assert follow.pill.geometry().top() >= 0
            shot(w, "follow-pill")

            # the pill: back to the newest, Follow on, nothing new any more
            click(follow.pill, follow.pill.rect().center())
            assert follow.following and bar.value() == 0
            assert w.unread == 0 and not follow.pill.isVisible() and w.windowTitle() == "Tenant Events"

            # Follow on, the pointer over the rows: nothing moves under it; the rows wait and the pill counts them
            QApplication.sendEvent(
                table.viewport(), QEnterEvent(QPointF(200, 60), QPointF(200, 60), QPointF(200, 60))
            )
            under = table.indexAt(QPoint(200, 60))
            held_seq = w.model.event_at(under.row()).seq  # type: ignore[union-attr]
            waited = 0
            while waited < 3:
                (n,) = await signal_future(w.model.rows_arrived, 20)
                waited += n
                await asyncio.sleep(0)
                assert w.model.event_at(table.indexAt(QPoint(200, 60)).row()).seq == held_seq  # type: ignore[union-attr]
            assert follow.following and bar.value() == waited
            assert w.unread == waited and follow.pill.isVisible()
            # a row pressed (and the pointer still on it) holds too
            click(table.viewport(), QPoint(200, 60))
            assert not follow.following  # picking a row stops following, as before
            w.menu_actions.follow.trigger()
            assert follow.following and bar.value() == 0  # Follow asked for: the newest now
            QApplication.sendEvent(
                table.viewport(), QEnterEvent(QPointF(200, 60), QPointF(200, 60), QPointF(200, 60))
            )
            await signal_future(w.model.rows_arrived, 20)
            assert bar.value() > 0 and w.unread > 0
            # the pointer leaves: the rows that waited come into view, nothing is new any more
            QApplication.sendEvent(table.viewport(), QEvent(QEvent.Type.Leave))
            assert follow.following and bar.value() == 0 and w.unread == 0 and not follow.pill.isVisible()
            await signal_future(w.model.rows_arrived, 20)
            assert bar.value() == 0 and w.unread == 0

            # a scroll by the user (the wheel) stops following too; scrolling up to the new rows sees them
            bar.triggerAction(bar.SliderAction.SliderSingleStepAdd)
            assert not follow.following
            await signal_future(w.model.rows_arrived, 20)
            assert w.unread > 0
            bar.triggerAction(bar.SliderAction.SliderToMinimum)
            assert w.unread == 0

            # unseen while the window is not looked at: rows that scrolled past are still new afterwards
            follow.set_following(True)
            w.showMinimized()
            await until(lambda: w.unread >= 2, 20, "rows arriving while minimized")
            count = w.unread
            assert w.windowTitle() == f"Tenant Events ({count:,} new)"
            w.bring_to_front()
            await until(lambda: w.isActiveWindow() and not w.isMinimized(), 10, "the window back")
            await until(lambda: w.unread == 0, 10, "the rows on screen counted as seen")

    run_async(qloop, scenario(), timeout=200)


def test_a_filter_change_shows_the_newest_matching_rows_or_keeps_the_row_being_read(qloop, ui_paths):
    async def scenario() -> None:
        async with running_app(
            ui_paths, demo=True, opener=browser, secret_store=MemorySecretStore(), simulator_args=DEMO_ARGS
        ) as app:
            w = await demo_window(app)
            table, bar, follow, fb = w.table, w.table.verticalScrollBar(), w.follow, w.filter_bar

            # reading far down the table, Follow off, rows arriving above
            for _ in range(4):
                bar.triggerAction(bar.SliderAction.SliderPageStepAdd)
            assert not follow.following and bar.value() > 50
            await signal_future(w.model.rows_arrived, 20)
            # "Hide user.created": the view shows the newest matching rows, and nothing above it is uncounted
            fb.set_types({t for t in fb.type_actions if t != "user.created"})
            await until(lambda: w.model.rowCount() > 0 and not w.model.counting, 15, "the filtered rows")
            assert bar.value() == 0 and follow.visible_rows()[0] == 0
            assert w.unread == 0 and not follow.pill.isVisible()
            (n,) = await signal_future(w.model.rows_arrived, 20)
            assert w.unread <= n  # only what arrived since, never rows that were there before the change

            # a row picked, then a filter it still matches: that row stays selected and in view
            row = 40
            follow.select_quietly(row)
            picked = w.model.event_at(row)
            assert picked is not None and picked.type != "user.created"
            fb.search.setText(f"-type:user.created type:{picked.type}")
            fb.search.returnPressed.emit()
            await until(lambda: not w.first_page.busy and not w.model.counting, 15, "the query's rows")
            await until(lambda: table.currentIndex().isValid(), 10, "the row selected again")
            kept = w.model.event_at(table.currentIndex().row())
            assert kept is not None and kept.seq == picked.seq
            first, last = follow.visible_rows()
            assert first <= table.currentIndex().row() <= last
            shot(w, "filter-change-kept-row")

            # clearing the query keeps it too; a filter that hides it shows the newest rows
            fb.search.clear()
            fb.search.returnPressed.emit()
            await until(lambda: not w.first_page.busy and not w.model.counting, 15, "all rows")
            assert w.model.event_at(table.currentIndex().row()).seq == picked.seq  # type: ignore[union-attr]
            fb.set_types({t for t in fb.type_actions if t != picked.type})
            await until(lambda: not w.model.counting, 15, "the rows without it")
            assert w.detail.shown is None and bar.value() == 0 and w.unread == 0

    run_async(qloop, scenario(), timeout=200)
