"""The main window in light and dark, 1,600 and 900 px wide, over a store with test events and an update:
screenshots for people to look at (artifacts/screenshots/), and the checks that stand for what they look at —
the theme's colours are drawn, no column is cut, the detail pane shows the update's changes."""

from __future__ import annotations

import orjson
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QFont, QFontMetrics, QPalette
from PySide6.QtWidgets import QApplication

from helpers.events_factory import frame, row
from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, save_screenshot
from tenant_events.store import Batch, EventRow, StoreWriter
from tenant_events.ui.look.theme import apply_theme
from tenant_events.ui.window.table.columns import ID_MIN, SUMMARY_WANTS
from tenant_events.ui.window.table.event_table_model import Col
from tenant_events.wire import EventMessage, EventType, decode_frame

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]
TYPES = [t.value for t in EventType]


@pytest.fixture(autouse=True)
def light_again(qapp):
    yield
    apply_theme(qapp, "light")


def _update_of(i: int, obj: dict) -> EventRow:
    name, text = frame(i, type_="user.updated")
    message = orjson.loads(text)
    message["event"]["data"] = {"object": obj}
    data = orjson.dumps(message).decode()
    decoded = decode_frame(name, data)
    assert isinstance(decoded, EventMessage)
    return EventRow.from_message(decoded, data, received_at=1.0)


def _store(tmp_path):
    path = tmp_path / "shots.sqlite3"
    rows = [row(i, type_=TYPES[i % len(TYPES)], purpose="test" if i % 7 == 0 else None) for i in range(3000)]
    created = row(3000, type_="user.created")
    obj = orjson.loads(created.raw)["event"]["data"]["object"]
    rows += [
        created,
        _update_of(3001, {**obj, "email_verified": True, "blocked": True, "updated_at": "later"}),
    ]
    writer = StoreWriter(path)
    writer.commit_sync(Batch(events=rows, cursor=rows[-1].offset))
    writer.index_all_sync()
    writer.close()
    return path


@pytest.mark.parametrize("width", [1600, 1280, 900])
@pytest.mark.parametrize("theme", ["light", "dark"])
def test_main_window_at_two_widths_in_both_themes(qapp, open_window, tmp_path, theme, width):
    dark = apply_theme(qapp, theme)
    w = open_window(_store(tmp_path), size=(width, 860))
    table = w.table
    w.follow.select_quietly(0)  # the newest: the update, with what it changed
    assert w.detail.shown is not None and w.detail.shown.type == "user.updated"
    assert "What changed" in w.detail.browser.toPlainText()

    # nothing cut: the type column fits every type name, bold ones too; summary keeps a readable width
    bold = QFont(table.font())
    bold.setBold(True)
    assert table.columnWidth(Col.TYPE) >= max(QFontMetrics(bold).horizontalAdvance(t) for t in TYPES)
    assert not table.isColumnHidden(Col.PURPOSE) and table.isColumnHidden(Col.TENANT)
    assert not table.isColumnHidden(Col.ID)  # never gone; narrow: it narrows to its start (elided)
    assert (table.columnWidth(Col.ID) < w.columns.content_width(Col.ID)) is (width < 1100)
    assert table.columnWidth(Col.ID) >= ID_MIN
    assert table.columnWidth(Col.SUMMARY) >= 300
    visible = sum(table.columnWidth(c) for c in Col if not table.isColumnHidden(c))
    assert visible <= table.viewport().width() + 1  # no horizontal scrolling needed
    # (in window coordinates: the table and the detail pane sit in containers of their own)
    below = w.detail.mapTo(w, QPoint(0, 0)).y() > table.mapTo(w, QPoint(0, table.height())).y()
    if width < 1100:  # narrow: the detail pane goes under the table so the columns keep their width
        assert below
    else:  # the detail pane open, beside the table or under it: the summary and the event ID read whole
        assert table.columnWidth(Col.ID) >= w.columns.content_width(Col.ID)
        assert table.columnWidth(Col.SUMMARY) >= SUMMARY_WANTS - 20
        assert below is (width == 1280)  # 1280 px: beside it, the table would cut them

    # the theme's colours are what is drawn
    image = w.grab().toImage()
    base = QApplication.palette().color(QPalette.ColorRole.Base)
    corner = table.viewport().mapTo(w, table.viewport().rect().bottomRight()) - QPoint(3, 3)
    assert abs(image.pixelColor(corner).lightness() - base.lightness()) < 40
    assert (base.lightness() < 100) is dark
    save_screenshot(w, f"window-{theme}-{width}")


def test_the_detail_pane_goes_under_the_table_once_the_rows_need_the_room(qapp, open_window, tmp_path):
    """A tenant that starts empty (the demo's first seconds): the pane starts beside the table, and goes under it
    as soon as the rows that arrive need the width (at 1280 px the summary and the event ID would be cut)."""
    path = tmp_path / "late.sqlite3"
    writer = StoreWriter(path)
    try:
        w = open_window(path, size=(1280, 780))
        assert w.splitter.orientation() == Qt.Orientation.Horizontal  # nothing to show yet: room enough
        rows = [row(i, type_=TYPES[i % len(TYPES)]) for i in range(200)]
        writer.commit_sync(Batch(events=rows, cursor=rows[-1].offset))
        assert w.model.advance_head() == 200  # the rows arrive at the top, as the feed puts them
        assert w.splitter.orientation() == Qt.Orientation.Vertical
        w.follow.select_quietly(0)
        table = w.table
        on_screen = (
            w.follow.visible_rows()[1] + 1
        )  # (the ID column widens as rows come, for the rows in view)
        assert table.columnWidth(Col.ID) >= w.columns.content_width(Col.ID, on_screen)
        assert table.columnWidth(Col.SUMMARY) >= SUMMARY_WANTS - 20
    finally:
        writer.close()
