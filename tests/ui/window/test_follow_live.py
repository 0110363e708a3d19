"""Reading while events arrive, on the real demo tenant (the simulator as a child process, signed in through its
login page): Follow keeps the newest in view with no row picked and nothing counted as new; a picked row stays at
its pixel while new rows go in above it; the pill says how many arrived unseen, sits where no column title is,
and brings them into view without picking a row; the pointer on the rows holds them."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QApplication

from helpers.demo_window import click, demo_app, demo_window, pointer_to
from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, save_screenshot, signal_future, until
from helpers.shots import shot
from tenant_events.ui.look.theme import apply_theme
from tenant_events.ui.window.table.new_events_pill import title_spans

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


def pill_clear_of_titles(follow) -> bool:
    """The pill is over no column title."""
    pill, header = follow.pill.geometry(), follow.table.horizontalHeader()
    left = pill.left() - header.geometry().left()
    right = left + pill.width()
    return all(right <= start or left >= end for start, end in title_spans(header))


def test_follow_pill_and_the_row_being_read_stays_put(qloop, ui_paths):
    async def scenario() -> None:
        async with demo_app(ui_paths) as app:
            w = await demo_window(app)
            table, bar, follow = w.table, w.table.verticalScrollBar(), w.follow
            await pointer_to(w, None)

            # the backlog arrived while the sign-in prompt had the focus; the window is looked at now, following
            # the newest: nothing is new any more, not even the rows that went past below the view
            await until(lambda: w.unread == 0, 10, "the backlog seen once the window is looked at")
            assert follow.following and w.windowTitle() == "Tenant Events"
            assert not table.currentIndex().isValid() and w.detail.shown is None
            for _ in range(100):  # reading down the table, a page at a time
                if bar.value() >= bar.maximum():
                    break
                bar.triggerAction(bar.SliderAction.SliderPageStepAdd)
            assert not follow.following  # the user scrolled
            await signal_future(w.model.rows_arrived, 20)
            assert w.unread > 0 and follow.pill.isVisible()  # what arrived meanwhile, above the view
            w.menu_actions.follow.trigger()  # View ▸ Follow newest events (F)
            assert follow.following and bar.value() == 0
            # Seen once the window is the active one: on a loaded desktop the activation can trail (the rows are
            # counted seen again on WindowActivate, follow.py), so wait for it rather than assume it
            await until(lambda: w.unread == 0, 10, "the rows at the top seen")

            # Follow on: new rows keep arriving at the top, the view stays there, nothing is "new", no row picked
            assert w.menu_actions.follow.isChecked()
            for _ in range(3):
                await signal_future(w.model.rows_arrived, 20)
                assert bar.value() == 0 and w.unread == 0 and w.windowTitle() == "Tenant Events"
                assert not follow.pill.isVisible() and not table.currentIndex().isValid()

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
            # in the header band, over no column title: the first row and "Summary" stay readable
            assert follow.pill.geometry().bottom() < table.viewport().geometry().top()
            assert follow.pill.geometry().top() >= 0 and pill_clear_of_titles(follow)
            for theme in ("dark", "light"):  # the pill over the column titles, in both themes
                apply_theme(QApplication.instance(), theme)
                save_screenshot(w, f"follow-pill-{theme}")

            # the pill: back to the newest, Follow on, no row picked, the focus where it was, nothing new
            focused = QApplication.focusWidget()
            click(follow.pill, follow.pill.rect().center())
            assert follow.following and bar.value() == 0 and not table.currentIndex().isValid()
            assert w.unread == 0 and not follow.pill.isVisible() and w.windowTitle() == "Tenant Events"
            assert QApplication.focusWidget() is focused and w.detail.shown is None
            # and Follow means it from then on: the newest stays in view, no row gets picked by itself
            for _ in range(3):
                await signal_future(w.model.rows_arrived, 20)
                assert bar.value() == 0 and w.unread == 0 and not table.currentIndex().isValid()
            next(a for a in w.menu_actions.all if a.text() == "Jump to &newest").trigger()  # N
            assert follow.following and bar.value() == 0 and not table.currentIndex().isValid()

            # the pointer over the rows: nothing moves under it; the rows wait and the pill counts them
            await pointer_to(table.viewport(), QPoint(200, 60))
            await until(lambda: follow.held, 10, "the pointer on the rows")
            under = table.indexAt(QPoint(200, 60))
            held_seq = w.model.event_at(under.row()).seq  # type: ignore[union-attr]
            at, new = bar.value(), w.unread  # rows may have come in while the pointer got there
            waited = 0
            while waited < 3:
                (n,) = await signal_future(w.model.rows_arrived, 20)
                waited += n
                await asyncio.sleep(0)
                assert w.model.event_at(table.indexAt(QPoint(200, 60)).row()).seq == held_seq  # type: ignore[union-attr]
            assert follow.following and bar.value() == at + waited
            # they wait above, said by the pill; following and looked at, they are not "new" in the title
            assert w.unread == 0 and w.windowTitle() == "Tenant Events" and new == 0
            assert follow.pill.isVisible() and follow.pill.shown == bar.value()
            # the pointer leaves: the rows that waited come into view, nothing is new any more
            await pointer_to(w, None)
            await until(lambda: not follow.held, 10, "the pointer gone")
            assert follow.following and bar.value() == 0 and w.unread == 0 and not follow.pill.isVisible()

            # a scroll by the user (the wheel) stops following; scrolling back up to the newest follows again
            bar.triggerAction(bar.SliderAction.SliderSingleStepAdd)
            assert not follow.following
            await signal_future(w.model.rows_arrived, 20)
            assert w.unread > 0
            bar.triggerAction(bar.SliderAction.SliderToMinimum)
            assert follow.following and w.unread == 0 and w.menu_actions.follow.isChecked()

    run_async(qloop, scenario(), timeout=200)


def test_a_filter_change_shows_the_newest_matching_rows_or_keeps_the_row_being_read(qloop, ui_paths):
    async def scenario() -> None:
        async with demo_app(ui_paths) as app:
            w = await demo_window(app)
            table, bar, follow, fb = w.table, w.table.verticalScrollBar(), w.follow, w.filter_bar
            await pointer_to(w, None)

            # reading far down the table, Follow off, rows arriving above
            for _ in range(4):
                bar.triggerAction(bar.SliderAction.SliderPageStepAdd)
            assert not follow.following and bar.value() > 50
            await signal_future(w.model.rows_arrived, 20)
            # "Hide user.created": the view shows the newest matching rows, followed, nothing above it uncounted
            fb.set_types({t for t in fb.type_actions if t != "user.created"})
            await until(lambda: w.model.rowCount() > 0 and not w.model.counting, 15, "the filtered rows")
            assert bar.value() == 0 and follow.visible_rows()[0] == 0 and follow.following
            assert w.unread == 0 and not follow.pill.isVisible()

            # a row picked, then a filter it still matches: that row stays selected and in view, Follow off
            row = 40
            follow.select_quietly(row)
            picked = w.model.event_at(row)
            assert picked is not None and picked.type != "user.created" and not follow.following
            fb.search.setText(f"-type:user.created type:{picked.type}")
            fb.search.returnPressed.emit()
            await until(lambda: not w.first_page.busy and not w.model.counting, 15, "the query's rows")
            await until(lambda: table.currentIndex().isValid(), 10, "the row selected again")
            kept = w.model.event_at(table.currentIndex().row())
            assert kept is not None and kept.seq == picked.seq and not follow.following
            first, last = follow.visible_rows()
            assert first <= table.currentIndex().row() <= last
            shot(w, "filter-change-kept-row")

            # clearing the query keeps it too; a filter that hides it shows the newest rows, followed
            fb.search.clear()
            fb.search.returnPressed.emit()
            await until(lambda: not w.first_page.busy and not w.model.counting, 15, "all rows")
            await until(
                lambda: table.currentIndex().isValid(), 10, "the row selected again (found on a worker)"
            )
            assert w.model.event_at(table.currentIndex().row()).seq == picked.seq  # type: ignore[union-attr]
            fb.set_types({t for t in fb.type_actions if t != picked.type})
            await until(lambda: not w.model.counting, 15, "the rows without it")
            await until(lambda: w.detail.shown is None, 10, "the pane cleared (looked for on a worker)")
            assert bar.value() == 0 and w.unread == 0 and follow.following

    run_async(qloop, scenario(), timeout=200)
