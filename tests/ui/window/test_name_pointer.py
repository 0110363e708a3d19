"""Names drawn as links in the Summary column and the timeline show the pointing hand while the pointer is over
them, and the arrow again over the sentence's plain words (a synthetic mouse move over the view's viewport)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication

from helpers.entity_stores import GRACE_TIMELINE, write_store
from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, until
from tenant_events.entities.sentences import Mention
from tenant_events.ui.window.table.event_table_model import SENTENCE_ROLE, Col
from tenant_events.ui.window.timeline.sentence_delegate import lay_out
from tenant_events.ui.window.timeline.timeline_model import TimelineCol

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]
HAND, ARROW = Qt.CursorShape.PointingHandCursor, Qt.CursorShape.ArrowCursor


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "acme.sqlite3"
    write_store(path, 300, seed=11)
    return path


def spots(view, index) -> tuple[QPoint, QPoint]:
    """A point over the cell's first name and one over its first plain words, where the delegate draws them."""
    rect = view.visualRect(index)
    name = words = None
    for part, x, width, _text in lay_out(
        index.data(SENTENCE_ROLE), view.fontMetrics(), rect.left(), rect.right()
    ):
        spot = QPoint(x + min(width // 2, 10), rect.center().y())
        if isinstance(part, Mention):
            name = name or spot
        elif part.strip():
            words = words or spot
    assert name is not None and words is not None, index.data()
    return name, words


def shape_after_move(view, pos: QPoint) -> Qt.CursorShape:
    viewport = view.viewport()
    move = QMouseEvent(
        QEvent.Type.MouseMove,
        QPointF(pos),
        QPointF(viewport.mapToGlobal(pos)),
        Qt.MouseButton.NoButton,
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(viewport, move)
    return viewport.cursor().shape()


def test_the_pointer_is_a_hand_over_names_and_an_arrow_elsewhere(open_window, qloop, store):
    w = open_window(store)
    row = next(r for r in range(w.model.rowCount()) if w.model.event_at(r).type == "group.member.added")
    cell = w.model.index(row, Col.SUMMARY)
    w.table.scrollTo(cell)
    run_async(qloop, until(lambda: cell.data(SENTENCE_ROLE) is not None))
    name, words = spots(w.table, cell)
    assert shape_after_move(w.table, words) == ARROW
    assert shape_after_move(w.table, name) == HAND
    assert shape_after_move(w.table, words) == ARROW
    assert shape_after_move(w.table, name) == HAND
    other = w.table.visualRect(w.model.index(row, Col.TYPE)).center()  # a column drawn without names
    assert shape_after_move(w.table, other) == ARROW
    shape_after_move(w.table, name)
    QApplication.sendEvent(w.table.viewport(), QEvent(QEvent.Type.Leave))
    assert w.table.viewport().cursor().shape() == ARROW

    # the same in a timeline
    grace = next(m for m in cell.data(SENTENCE_ROLE).mentions if m.kind == "user")
    w.entities.timelines.open_mention("acme", grace)
    pane = w.entities.timelines.pane
    run_async(qloop, until(lambda: pane.isVisible() and pane.model.rowCount() == len(GRACE_TIMELINE)))
    entry = pane.model.index(2, TimelineCol.WHAT)
    name, words = spots(pane.table, entry)
    assert shape_after_move(pane.table, words) == ARROW
    assert shape_after_move(pane.table, name) == HAND
    assert shape_after_move(pane.table, words) == ARROW
