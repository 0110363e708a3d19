"""The main tasks with the keyboard alone: search, filter by type, open an event, copy it, change the time range,
open settings, the shortcut sheet; and every control has an accessible name and a keyboard path."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAccessible, QGuiApplication
from PySide6.QtWidgets import QAbstractButton, QApplication, QMenu, QWidget

from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, save_screenshot
from tenant_events.settings import Settings
from tenant_events.ui.settings.settings_dialog import SettingsDialog
from tenant_events.ui.window.filters.filter_bar import CUSTOM

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]
CTRL, SHIFT, ALT = (
    Qt.KeyboardModifier.ControlModifier,
    Qt.KeyboardModifier.ShiftModifier,
    Qt.KeyboardModifier.AltModifier,
)


def focused() -> QWidget | None:
    return QApplication.focusWidget()


def in_popup(qtbot, drive) -> None:
    """Run `drive(menu)` on the next popup menu once it is up (a tool button's menu runs its own event loop)."""

    def later() -> None:
        popup = QApplication.activePopupWidget()
        if popup is None:
            QTimer.singleShot(20, later)
            return
        drive(popup)

    QTimer.singleShot(0, later)


def test_main_tasks_by_keyboard(open_window, filled_store, qtbot):
    w = open_window(filled_store(2200))
    bar = w.filter_bar
    settings_opened: list[SettingsDialog] = []

    def open_settings() -> None:  # what the app does with the window's request
        dialog = SettingsDialog(Settings(), set(), w)
        settings_opened.append(dialog)
        dialog.open()

    w.settings_requested.connect(open_settings)

    # search: Ctrl+F, type, Enter
    qtbot.keyClick(w, Qt.Key.Key_F, CTRL)
    assert focused() is bar.search
    qtbot.keyClicks(bar.search, "user1")
    qtbot.keyClick(bar.search, Qt.Key.Key_Return)
    assert w.model.event_filter.query == "user1"

    # filter by type: Shift+Tab to the types button, Space opens its menu, arrows and Enter pick one
    qtbot.keyClick(bar.search, Qt.Key.Key_Backtab, SHIFT)
    assert focused() is bar.types_button

    def pick_user_deleted(menu: QMenu) -> None:
        for _ in range(40):
            qtbot.keyClick(menu, Qt.Key.Key_Down)
            if menu.activeAction() is not None and menu.activeAction().text().startswith("user.deleted"):
                break
        qtbot.keyClick(menu, Qt.Key.Key_Return)

    in_popup(qtbot, pick_user_deleted)
    qtbot.keyClick(bar.types_button, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: w.model.event_filter.types == {"user.deleted"})
    assert bar.types_button.text() == "user.deleted"
    rows = w.model.rowCount()
    assert rows > 0 and all(w.model.event_at(r).type == "user.deleted" for r in range(rows))

    # open an event: from the search, Down goes to the events; arrows move; the detail pane follows
    qtbot.keyClick(w, Qt.Key.Key_F, CTRL)
    qtbot.keyClick(bar.search, Qt.Key.Key_Down)
    assert focused() is w.table and w.detail.shown is not None
    first = w.detail.shown.seq
    qtbot.keyClick(w.table, Qt.Key.Key_Down)
    assert w.detail.shown.seq != first and w.detail.shown.type == "user.deleted"
    assert not w.follow.following  # picking a row stops following

    # copy it: Ctrl+Shift+C, confirmed
    qtbot.keyClick(w.table, Qt.Key.Key_C, CTRL | SHIFT)
    assert (
        QGuiApplication.clipboard().text() == w.detail.pretty and w.toast.text() == "Copied the event as JSON"
    )

    # Follow back on with F, from the table
    qtbot.keyClick(w.table, Qt.Key.Key_F)
    assert w.follow.following and w.table.verticalScrollBar().value() == 0

    # change the time range: Tab from the search to the time menu, Down picks the next range
    qtbot.keyClick(w, Qt.Key.Key_F, CTRL)
    qtbot.keyClick(bar.search, Qt.Key.Key_Tab)
    assert focused() is bar.range_box
    qtbot.keyClick(bar.range_box, Qt.Key.Key_Down)
    assert bar.range_box.currentIndex() == 1 and w.model.event_filter.since is not None
    # …and "Custom…" opens the date-time fields; Enter accepts the range shown (the last hour)
    for _ in range(CUSTOM - 1):
        qtbot.keyClick(bar.range_box, Qt.Key.Key_Down)
    dialog = w.zoom.dialog
    assert dialog is not None and dialog.isVisible()
    qtbot.waitUntil(lambda: focused() is dialog.since)
    qtbot.keyClick(dialog.since, Qt.Key.Key_Return)
    assert not dialog.isVisible()
    flt = w.model.event_filter
    assert flt.until is not None and (flt.until - flt.since).total_seconds() == 3600
    assert bar.range_box.currentIndex() == CUSTOM

    # settings: Alt+F opens File, S picks Settings…; Escape closes the dialog
    w.activateWindow()  # Xvfb has no window manager to hand the focus back after a dialog closes
    qtbot.waitUntil(w.isActiveWindow)
    qtbot.keyClick(w, Qt.Key.Key_F, ALT)
    qtbot.waitUntil(lambda: isinstance(QApplication.activePopupWidget(), QMenu))
    qtbot.keyClick(QApplication.activePopupWidget(), Qt.Key.Key_S)
    qtbot.waitUntil(lambda: bool(settings_opened) and settings_opened[0].isVisible())
    save_screenshot(settings_opened[0], "settings-from-window")
    qtbot.keyClick(settings_opened[0], Qt.Key.Key_Escape)
    assert not settings_opened[0].isVisible()

    # the shortcut sheet: F1, and ? as well; it lists what the keys above did
    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow)
    qtbot.keyClick(w, Qt.Key.Key_F1)
    sheet = w.menu_actions.help_dialog
    assert sheet is not None and sheet.isVisible()
    listed = dict(sheet.entries)
    assert listed["Follow newest events"] == "F" and listed["Settings"] == "Ctrl+,"
    assert listed["Keyboard shortcuts"] == "F1 or ?" and "Search" in listed and "Event actions" in listed
    save_screenshot(sheet, "shortcuts-help")
    sheet.close()
    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow)
    qtbot.keyClick(w.table, Qt.Key.Key_Question)
    assert sheet.isVisible()
    sheet.close()


def test_every_control_has_a_name_and_a_keyboard_path(open_window, filled_store):
    w = open_window(filled_store(100))
    w.step(1)
    unnamed, checked = [], []
    for widget in w.findChildren(QWidget):
        if not widget.isVisible() or widget.window() is not w:
            continue
        control = isinstance(widget, QAbstractButton) or bool(widget.focusPolicy() & Qt.FocusPolicy.TabFocus)
        if not control:
            continue
        checked.append(widget)
        iface = QAccessible.queryAccessibleInterface(widget)
        if iface is None or not iface.text(QAccessible.Text.Name).strip():
            unnamed.append(f"{type(widget).__name__} {widget.objectName()!r}")
    names = sorted(type(x).__name__ + ":" + x.accessibleName() for x in checked)
    assert unnamed == [] and len(checked) >= 13, "; ".join(names)  # filter bar, corner, table, detail, status

    # Tab from the tenant box reaches every control of the filter bar, the table and the detail pane in order
    bar, d = w.filter_bar, w.detail
    chain, widget = [], bar.tenant_box
    for _ in range(200):
        chain.append(widget)
        widget = widget.nextInFocusChain()
        if widget is bar.tenant_box:
            break
    wanted = [
        bar.tenant_box,
        bar.types_button,
        bar.search,
        bar.range_box,
        bar.test_box,
        bar.saved_button,
        w.table,
        d.browser,
        d.copy_button,
        d.copy_jsonl_button,
    ]
    positions = [chain.index(x) for x in wanted]
    assert positions == sorted(positions)
    # what is not in the Tab chain has a shortcut and a menu entry: the histogram zoom, the pill, the corner buttons
    menus = {a.text().replace("&", "") for m in w.menuBar().findChildren(QMenu) for a in m.actions()}
    for text, keys in (
        ("Custom time range…", "Ctrl+T"),
        ("Reset zoom", "Ctrl+0"),
        ("Jump to newest", "N"),
        ("Follow newest events", "F"),
        ("Settings…", "Ctrl+,"),
        ("Export view…", "Ctrl+E"),
    ):
        action = next(a for a in w.menu_actions.all if a.text().replace("&", "") == text)
        assert action.shortcut().toString() == keys and text in menus
