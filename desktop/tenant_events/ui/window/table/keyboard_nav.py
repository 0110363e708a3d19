"""Keyboard paths between the window's parts that Tab alone makes long: Down in the search field goes to the
events, Escape in the events goes back to the search; Tab visits the filter bar, the table, the detail pane.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Protocol

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QTableView, QWidget

from tenant_events.ui.window.detail_pane import DetailPane
from tenant_events.ui.window.filters.filter_bar import FilterBar
from tenant_events.ui.window.table.event_table_model import EventTableModel
from tenant_events.ui.window.table.follow import FollowController


class NavigatedWindow(Protocol):
    """What of the main window the keyboard paths join (no import of it: it imports this module)."""

    filter_bar: FilterBar
    table: QTableView
    detail: DetailPane
    model: EventTableModel
    follow: FollowController

    def window(self) -> QWidget: ...


class KeyboardNav(QObject):
    def __init__(self, w: NavigatedWindow) -> None:
        super().__init__(w.window())  # the main window itself: a top-level widget is its own window()
        self.w = w
        bar = w.filter_bar
        order: list[QWidget] = [
            bar.tenant_box,
            bar.types_button,
            bar.search,
            bar.range_box,
            bar.test_box,
            bar.saved_button,
            w.table,
            w.detail.browser,
            w.detail.copy_button,
            w.detail.copy_jsonl_button,
        ]
        for a, b in pairwise(order):
            QWidget.setTabOrder(a, b)
        bar.types_button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        bar.saved_button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        bar.search.installEventFilter(self)
        w.table.installEventFilter(self)

    def to_events(self) -> None:
        """Focus the table on its current row (the first when none): the detail pane follows."""
        w = self.w
        w.table.setFocus(Qt.FocusReason.ShortcutFocusReason)
        if not w.table.currentIndex().isValid() and w.model.rowCount():
            w.follow.select_quietly(0)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() != QEvent.Type.KeyPress or not isinstance(event, QKeyEvent):
            return False
        plain = event.modifiers() == Qt.KeyboardModifier.NoModifier
        if watched is self.w.filter_bar.search and plain and event.key() == Qt.Key.Key_Down:
            self.to_events()
            return True
        if watched is self.w.table and plain and event.key() == Qt.Key.Key_Escape:
            self.w.filter_bar.focus_search()
            return True
        return False
