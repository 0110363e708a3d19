"""Time ranges: the histogram zooms to a dragged range and back (Escape, right-click, Reset zoom), shows a legend
and per-bucket counts; "Custom…" picks a range with date-time fields; saved filters are named, keep the range,
can be renamed and deleted, and survive a restart."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from PySide6.QtCore import QDateTime, QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QHelpEvent, QKeyEvent, QMouseEvent
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QToolTip

from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, save_screenshot
from helpers.fixtures_window import settle
from tenant_events.ui.look.theme import family_color
from tenant_events.ui.window.filters.filter_bar import CUSTOM

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]
T0 = datetime(2026, 11, 1, tzinfo=UTC)  # the factory's first event; one a second after it


def mouse(widget, kind: QEvent.Type, x: float, button=Qt.MouseButton.LeftButton) -> None:
    pos = QPointF(x, widget.height() / 2)
    buttons = Qt.MouseButton.NoButton if kind == QEvent.Type.MouseButtonRelease else button
    event = QMouseEvent(kind, pos, widget.mapToGlobal(pos), button, buttons, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(widget, event)


def drag(widget, x0: float, x1: float) -> None:
    mouse(widget, QEvent.Type.MouseButtonPress, x0)
    mouse(widget, QEvent.Type.MouseMove, (x0 + x1) / 2)
    mouse(widget, QEvent.Type.MouseMove, x1)
    mouse(widget, QEvent.Type.MouseButtonRelease, x1)


def bar_columns(w) -> list[int]:
    """x of every pixel column of the histogram that shows a bar (any family colour)."""
    image = w.histogram.grab().toImage()
    colours = {family_color(f, False).name() for f in ("user", "group", "organization")}
    y = image.height() - 20  # just above the axis strip: the bars' feet
    return [x for x in range(image.width()) if image.pixelColor(x, y).name() in colours]


def test_drag_zooms_the_chart_to_the_range_and_back(open_window, filled_store, qloop, qtbot):
    w = open_window(filled_store(3600))  # an hour of events, one a second
    h, bar = w.histogram, w.filter_bar
    qtbot.waitUntil(lambda: bool(bar_columns(w)), timeout=20_000)  # the counts are read on a worker
    full_span = h._span()
    assert bar_columns(w)[0] < 20 and bar_columns(w)[-1] > h.width() - 20

    # the legend: a swatch of each family's colour in the bottom strip, and its name beside it
    strip = h.grab().toImage()
    seen = {strip.pixelColor(x, strip.height() - 8).name() for x in range(strip.width())}
    assert {family_color(f, False).name() for f in h.legend_families()} <= seen

    drag(h, h.width() * 0.25, h.width() * 0.5)
    run_async(qloop, settle(w))
    flt = w.model.event_filter
    assert flt.since is not None and flt.until is not None
    minutes = (flt.until - flt.since).total_seconds() / 60
    assert 13 < minutes < 17  # a quarter of the hour
    assert h.span == (int(flt.since.timestamp()), int(flt.until.timestamp()))
    assert w.zoom.stack == [(0, None)] and w.zoom.reset_button.isVisible()
    columns = bar_columns(w)  # the zoomed data fills the width, not a third of it
    assert columns[0] < 0.05 * h.width() and columns[-1] > 0.95 * h.width()
    assert bar.range_box.currentIndex() == CUSTOM and bar.range_box.currentText().count(":") == 4
    assert w.model.rowCount() == pytest.approx(minutes * 60, abs=2)
    save_screenshot(w, "histogram-zoomed")

    drag(h, h.width() * 0.5, h.width() * 0.75)  # zoom further in
    run_async(qloop, settle(w))
    assert len(w.zoom.stack) == 2
    mouse(h, QEvent.Type.MouseButtonPress, 10, Qt.MouseButton.RightButton)  # right-click: one step out
    run_async(qloop, settle(w))
    assert w.model.event_filter == flt and len(w.zoom.stack) == 1

    h.setFocus()
    QApplication.sendEvent(
        h, QKeyEvent(QEvent.Type.KeyPress, Qt.Key.Key_Escape, Qt.KeyboardModifier.NoModifier)
    )
    run_async(qloop, settle(w))
    assert w.model.event_filter.since is None and bar.range_box.currentIndex() == 0
    assert not w.zoom.stack and not w.zoom.reset_button.isVisible() and h._span() == full_span

    drag(h, 100, 300)
    drag(h, 100, 300)
    w.menu_actions.reset_zoom.trigger()  # View ▸ Reset zoom: straight back to before the first zoom
    run_async(qloop, settle(w))
    assert w.model.event_filter.since is None and not w.zoom.stack


def test_hover_tells_the_bucket_time_and_counts(open_window, filled_store):
    w = open_window(filled_store(2200))
    h = w.histogram
    t0, counts = h.buckets[len(h.buckets) // 2]
    start, end = h._span()
    x = int((t0 + h.bucket_s / 2 - start) / (end - start) * h.width())
    assert h.bucket_at(x) == (t0, counts)
    QApplication.sendEvent(h, QHelpEvent(QEvent.Type.ToolTip, QPoint(x, 20), h.mapToGlobal(QPoint(x, 20))))
    text = QToolTip.text()
    local = datetime.fromtimestamp(t0).strftime("%H:%M:%S")
    assert text.startswith(f"2026-11-01 {local}–") or text.startswith(f"{local}–")
    for fam in ("user", "group", "organization"):
        assert f"{fam}: {counts[fam]:,}" in text
    assert f"total: {sum(counts.values()):,}" in text
    QToolTip.hideText()


def test_custom_range_dialog(open_window, filled_store, qloop, qtbot):
    w = open_window(filled_store(1200))
    bar = w.filter_bar
    assert bar.range_box.itemText(CUSTOM) == "Custom…"
    bar.range_box.activated.emit(CUSTOM)  # what choosing "Custom…" in the menu emits
    bar.range_box.setCurrentIndex(CUSTOM)
    dialog = w.zoom.dialog
    assert dialog is not None and dialog.isVisible()
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    since, until = T0 + timedelta(minutes=5), T0 + timedelta(minutes=10)
    dialog.since.setDateTime(QDateTime.fromSecsSinceEpoch(int(until.timestamp())))
    dialog.until.setDateTime(QDateTime.fromSecsSinceEpoch(int(since.timestamp())))
    assert not ok.isEnabled() and "later" in dialog.error.text()  # told next to the fields, OK waits
    dialog.since.setDateTime(QDateTime.fromSecsSinceEpoch(int(since.timestamp())))
    dialog.until.setDateTime(QDateTime.fromSecsSinceEpoch(int(until.timestamp())))
    assert ok.isEnabled() and dialog.error.text() == ""
    save_screenshot(dialog, "custom-range-dialog")
    ok.click()
    assert w.model.event_filter.since == since and w.model.event_filter.until == until
    assert w.model.rowCount() == 300
    run_async(qloop, settle(w))
    assert w.histogram.span == (int(since.timestamp()), int(until.timestamp()))
    label = bar.range_box.currentText()
    assert "Nov 01" in label and label.count(":") == 4  # not today: the date, and both times in full
    assert bar.range_box.width() >= bar.range_box.fontMetrics().horizontalAdvance(label)

    # "Custom…" again, cancelled: the range stays what it was
    bar.range_box.activated.emit(CUSTOM)
    w.zoom.dialog.reject()
    assert w.model.event_filter.since == since


def test_named_saved_filter_keeps_its_range(open_window, filled_store, qloop, tmp_path):
    path = filled_store(1200)
    w = open_window(path)
    bar, saved = w.filter_bar, w.saved_filters
    since, until = T0 + timedelta(minutes=2, seconds=0.5), T0 + timedelta(minutes=4)
    bar.set_types({"user.created", "user.deleted"})
    w.zoom.zoom_to(since, until)
    shown = w.model.rowCount()
    assert 10 <= shown <= 12  # 2 of 22 types over 119.5 s

    dialog = saved.ask_save()  # Edit ▸ Save this filter… asks for a name, the filter described as a start
    assert dialog.edit.text().startswith("user.created, user.deleted · Nov 01")
    dialog.edit.setText("")
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    assert not ok.isEnabled() and dialog.error.text() == "Type a name for this filter."
    dialog.edit.setText("Incident window")
    ok.click()
    assert list(saved.saved) == ["Incident window"]
    assert saved.saved["Incident window"]["range"] == CUSTOM

    bar.clear_types()
    w.zoom.reset()
    bar.range_box.setCurrentIndex(2)  # last hour
    assert w.model.rowCount() != shown
    saved.rebuild_menu()
    [apply] = [a for a in bar.saved_menu.actions() if a.text() == "Incident window"]
    assert "from 2026-11-01T00:02:00.500000+00:00" in apply.toolTip()
    apply.trigger()
    flt = w.model.event_filter
    assert (flt.since, flt.until, flt.types) == (since, until, {"user.created", "user.deleted"})
    assert w.model.rowCount() == shown

    # rename: a taken name is refused next to the field; a new one replaces it, in place
    saved.save_as("Another")
    dialog = saved.ask_rename("Incident window")
    dialog.edit.setText("Another")
    assert (
        "taken" in dialog.error.text()
        and not dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).isEnabled()
    )
    dialog.edit.setText("Incident 42")
    dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    assert list(saved.saved) == ["Incident 42", "Another"]
    saved.rebuild_menu()
    delete = next(a.menu() for a in bar.saved_menu.actions() if a.text() == "Delete")
    next(a for a in delete.actions() if a.text() == "Another").trigger()
    assert list(saved.saved) == ["Incident 42"]

    # kept in the window state: a new window has it, range and all
    w.save_layout()
    again = open_window(path, name="acme")
    again.restore_filter()
    assert list(again.saved_filters.saved) == ["Incident 42"]
    again.saved_filters.apply("Incident 42")
    assert (again.model.event_filter.since, again.model.event_filter.until) == (since, until)
