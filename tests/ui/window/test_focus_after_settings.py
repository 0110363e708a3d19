"""Closing Settings gives the keyboard back to where the user was, under openbox and without a window manager: the
events table, or the control the user was on; never the search box (N and F typed next are the window's keys, not
letters of a new filter)."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication, QDialog

from helpers.demo_window import click, demo_app, demo_window, pointer_to
from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, until

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


async def settings_opened_and_closed(app, close) -> None:
    w = app.window
    w.menu_actions.settings.trigger()
    dialog = app.settings_dialog
    await until(lambda: dialog is not None and dialog.isVisible() and dialog.isActiveWindow(), 10, "Settings")
    close(dialog)
    await until(lambda: not dialog.isVisible() and w.isActiveWindow(), 10, "the window active again")
    await until(lambda: QApplication.focusWidget() is not None, 10, "a focused widget")


@pytest.mark.parametrize("window_manager", ["openbox", "none"], indirect=True)
def test_the_focus_comes_back_to_the_table_or_the_search_box(qloop, ui_paths, window_manager):
    async def scenario() -> None:
        async with demo_app(ui_paths) as app:
            w = await demo_window(app)
            await pointer_to(w, None)
            # reading: a row picked with the mouse, then Settings (Ctrl+,) and Cancel, then OK
            click(w.table.viewport(), w.table.visualRect(w.model.index(2, 1)).center())
            w.table.setFocus()
            for close in (QDialog.reject, QDialog.accept):
                await settings_opened_and_closed(app, close)
                assert QApplication.focusWidget() is w.table, QApplication.focusWidget()
                assert w.filter_bar.search.text() == ""
            # following, nothing focused yet by the user (the window just came up): the table, not the search
            w.follow.jump_to_newest()
            w.table.clearFocus()
            await settings_opened_and_closed(app, QDialog.reject)
            assert QApplication.focusWidget() is w.table and not w.table.currentIndex().isValid()
            # F is the window's again: Follow off, nothing typed anywhere
            w.menu_actions.follow.trigger()
            assert not w.follow.following and w.filter_bar.search.text() == ""
            # a query typed and run in the search box, then Settings: the table again, not the search box (the
            # letters typed next are the window's keys)
            w.filter_bar.focus_search()
            w.filter_bar.search.setText("type:user.created")
            w.filter_bar.search.returnPressed.emit()
            await settings_opened_and_closed(app, QDialog.reject)
            assert QApplication.focusWidget() is w.table
            w.menu_actions.follow.trigger()
            assert w.filter_bar.search.text() == "type:user.created"
            # the Tab order's other stops are kept (the time range box, say)
            w.filter_bar.range_box.setFocus()
            await settings_opened_and_closed(app, QDialog.reject)
            assert QApplication.focusWidget() is w.filter_bar.range_box

    run_async(qloop, scenario(), timeout=200)
