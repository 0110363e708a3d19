"""Right-click on a row or cell: filter to the value, exclude it, copy value / event / JSONL (confirmed), open the
object in the tenant's dashboard. Driven through the real context-menu event on the table's viewport."""

from __future__ import annotations

import base64

import pytest
from PySide6.QtCore import QObject, QPoint, Qt, QUrl, Slot
from PySide6.QtGui import QContextMenuEvent, QDesktopServices, QGuiApplication
from PySide6.QtWidgets import QApplication, QMenu

from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, save_screenshot
from tenant_events.cli.export_cmd import jsonl_line as export_line
from tenant_events.ui.window.table.event_table_model import Col
from tenant_events.view import event_text

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


class Browser(QObject):
    """Stands in for the system browser: QDesktopServices hands https links to it."""

    def __init__(self) -> None:
        super().__init__()
        self.opened: list[str] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.opened.append(url.toString())


def right_click(w, row: int, col: Col) -> QMenu:
    """A right-click on a cell, as the window system delivers it: the menu the table opens."""
    table = w.table
    pos = table.visualRect(w.model.index(row, col)).center()
    event = QContextMenuEvent(QContextMenuEvent.Reason.Mouse, pos, table.viewport().mapToGlobal(pos))
    QApplication.sendEvent(table.viewport(), event)
    assert w.row_menu.menu is not None and w.row_menu.menu.isVisible()
    return w.row_menu.menu


def act(menu: QMenu, text: str):
    found = [a for a in menu.actions() if a.text() == text]
    assert found, f"no {text!r} in {[a.text() for a in menu.actions()]}"
    return found[0]


def test_filter_to_a_type_and_exclude_it(open_window, filled_store):
    w = open_window(filled_store(2200))
    ev = w.model.event_at(2)
    menu = right_click(w, 2, Col.TYPE)
    act(menu, f"Show only {ev.type}").trigger()
    menu.close()
    assert w.model.event_filter.types == {ev.type} and w.filter_bar.types_button.text() == ev.type
    assert w.model.rowCount() == 100 and {w.model.event_at(r).type for r in range(100)} == {ev.type}

    w.filter_bar.clear_types()
    other = w.model.event_at(0)
    menu = right_click(w, 0, Col.TYPE)
    act(menu, f"Hide {other.type}").trigger()
    menu.close()
    assert other.type not in w.model.event_filter.types and len(w.model.event_filter.types) == 21
    assert w.model.rowCount() == 2100


def test_search_time_and_object_choices(open_window, filled_store):
    w = open_window(filled_store(440))
    ev = w.model.event_at(5)
    menu = right_click(w, 5, Col.ID)
    act(menu, f"Search for “{ev.event_id}”").trigger()
    menu.close()
    assert w.model.event_filter.query == ev.event_id and w.model.rowCount() == 1

    w.filter_bar.search.clear()
    w.filter_bar.search.returnPressed.emit()
    w.follow.select_quietly(200)  # a row in the middle: a whole minute of events around it
    menu = right_click(w, 200, Col.TIME)
    act(menu, "Show the minute around this time").trigger()
    menu.close()
    flt = w.model.event_filter
    assert (flt.until - flt.since).total_seconds() == 60
    assert w.filter_bar.range_box.currentText().count(":") == 4  # the whole range, from and to
    assert w.model.rowCount() == 60  # the factory writes one event a second

    user_row = next(r for r in range(w.model.rowCount()) if w.model.event_at(r).family == "user")
    full = w.feed.ui_readers[w.feed.tenant].get(w.model.event_at(user_row).seq)
    user_id = event_text.data_of(full.raw)["object"]["user_id"]
    menu = right_click(w, user_row, Col.SUMMARY)
    [about] = [a for a in menu.actions() if a.text().startswith("Show every event about ")]
    # named as the row names the user (its e-mail), not by the raw id
    sentence = w.model.names.sentence(full.seq)
    [name] = [m.label for m in sentence.mentions if m.id == user_id]
    assert about.text() == f"Show every event about user {name}" and user_id not in about.text()
    about.trigger()
    menu.close()
    assert w.model.event_filter.query == user_id
    assert w.model.row_of_seq(full.seq) is not None  # the event itself is among them


def test_copy_actions_confirm_and_match_what_they_say(open_window, filled_store):
    w = open_window(filled_store(100))
    ev = w.feed.ui_readers[w.feed.tenant].get(w.model.event_at(1).seq)
    clipboard = QGuiApplication.clipboard()

    menu = right_click(w, 1, Col.TYPE)
    act(menu, "Copy type").trigger()
    assert clipboard.text() == ev.type
    assert w.toast.isVisible() and w.toast.text() == "Copied the type"
    assert w.toast.accessibleName() == "Copied the type"

    menu = right_click(w, 1, Col.SUMMARY)
    act(menu, "Copy event").trigger()
    assert clipboard.text() == event_text.pretty(ev.raw) and w.toast.text() == "Copied the event as JSON"

    menu = right_click(w, 1, Col.SUMMARY)
    act(menu, "Copy as JSONL").trigger()
    assert clipboard.text() == export_line(ev, ev.raw)  # the same line `tenant-events export` writes
    assert w.toast.text() == "Copied the event as a JSONL line"
    menu.close()

    # the detail pane's buttons and the window's shortcuts confirm too
    w.step(1)
    w.detail.copy_button.click()
    assert clipboard.text() == w.detail.pretty and w.toast.text() == "Copied the event as JSON"


def test_open_in_dashboard_only_where_the_domain_has_one(open_window, filled_store):
    w = open_window(filled_store(44))
    browser = Browser()
    QDesktopServices.setUrlHandler("https", browser, "open")
    try:
        user_row = next(r for r in range(w.model.rowCount()) if w.model.event_at(r).type == "user.updated")
        ev = w.feed.ui_readers[w.feed.tenant].get(w.model.event_at(user_row).seq)
        user_id = event_text.data_of(ev.raw)["object"]["user_id"]
        w.set_tenant_domain("acme", "127.0.0.1:8443")  # a simulator: no dashboard
        menu = right_click(w, user_row, Col.TYPE)
        assert not act(menu, "Open in dashboard").isEnabled()
        menu.close()
        w.set_tenant_domain("acme", "acme.eu.auth0.com")
        menu = right_click(w, user_row, Col.TYPE)
        act(menu, "Open in dashboard").trigger()
        menu.close()
        want = (
            "https://manage.auth0.com/dashboard/eu/acme/users/" + base64.b64encode(user_id.encode()).decode()
        )
        assert browser.opened == [want]
        # the detail pane links the same page
        w.follow.select_quietly(user_row)
        assert f'href="{want}"' in w.detail.link.text()
    finally:
        QDesktopServices.unsetUrlHandler("https")


def test_keyboard_opens_the_menu_on_the_current_row(open_window, filled_store, qtbot):
    w = open_window(filled_store(50))
    w.step(1)
    w.table.setFocus()
    qtbot.keyClick(w.table, Qt.Key.Key_F10, Qt.KeyboardModifier.ShiftModifier)
    menu = w.row_menu.menu
    assert menu is not None and menu.isVisible()
    rect = w.table.visualRect(w.table.currentIndex())
    assert menu.pos().y() >= w.table.viewport().mapToGlobal(QPoint(0, rect.bottom())).y() - 1
    menu.close()


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_object_choice_names_the_object(qapp, open_window, filled_store, theme):
    from tenant_events.ui.look.theme import apply_theme

    apply_theme(qapp, theme)
    try:
        w = open_window(filled_store(60))
        row = next(r for r in range(w.model.rowCount()) if w.model.event_at(r).family == "user")
        menu = right_click(w, row, Col.SUMMARY)
        [about] = [a for a in menu.actions() if a.text().startswith("Show every event about ")]
        assert about.text().startswith("Show every event about user ") and "|" not in about.text()
        menu.adjustSize()
        save_screenshot(menu, f"row-menu-named-{theme}")
        menu.close()
    finally:
        apply_theme(qapp, "light")
