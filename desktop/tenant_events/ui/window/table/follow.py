"""Reading while events arrive: the Follow toggle, keeping the reader's rows in place, and the unseen count.

    Follow on ──(user scrolls the table, or picks a row)──▶ Follow off
       ▲                                                      │
       └──(Follow toggled on, or the new-events pill clicked)─┘

On: new rows at the top scroll into view, except while the pointer is over the table or a row is pressed: then
nothing moves under it (the rows wait, the pill counts them) and the view goes to the newest once the pointer
leaves. Off: the view shifts by exactly the inserted rows, so every row on screen (the selected one included)
stays at the same pixel. A new filter or tenant (a model reset) shows its newest rows; the window then selects
the event being read again if it still matches. Rows the user has not had on screen while the
window was active are counted (view/unseen_rows.py); the pill over the table shows them when they are above
the viewport and jumps to the newest.
"""

from __future__ import annotations

from PySide6.QtCore import (
    QEvent,
    QItemSelectionModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtWidgets import QAbstractItemView, QAbstractSlider, QPushButton, QTableView, QWidget

from tenant_events.ui.window.table.event_table_model import EventTableModel
from tenant_events.view.unseen_rows import UnseenRows

Index = QModelIndex | QPersistentModelIndex


class NewEventsPill(QPushButton):
    """ "↑ N new events", floating at the top centre of the table (newest rows are at the top)."""

    def __init__(self, table: QTableView) -> None:
        super().__init__(table)
        self.table = table
        self.setObjectName("newEventsPill")
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setAccessibleName("Jump to the newest events")
        self.setToolTip("Jump to the newest events and follow them (N)")
        self.setStyleSheet(
            "#newEventsPill { background: palette(highlight); color: palette(highlighted-text);"
            " border: none; border-radius: 10px; padding: 1px 14px; font-weight: bold; }"
        )
        self.shown = 0
        self.hide()

    def show_count(self, n: int) -> None:
        if n == self.shown:  # called on every scroll step: only a change costs anything
            return
        self.shown = n
        if n > 0:
            self.setText(f"↑ {n:,} new event{'' if n == 1 else 's'}")
            self.adjustSize()
            self.place()
            self.raise_()
        self.setVisible(n > 0)

    def place(self) -> None:
        """Over the column titles, never over the first row (the newest event is the one to read)."""
        viewport = self.table.viewport().geometry()  # in the table's coordinates: below the header
        band = viewport.y()  # the header's height (0 with no header)
        if band >= 12:
            self.setMaximumHeight(band)
            self.resize(self.width(), min(self.sizeHint().height(), band))
        self.move(viewport.x() + (viewport.width() - self.width()) // 2, max(0, (band - self.height()) // 2))


class FollowController(QObject):
    """Owns scrolling on new rows and the unseen count for one table (see the module docstring)."""

    following_changed = Signal(bool)
    unseen_changed = Signal(int)

    def __init__(self, table: QTableView, model: EventTableModel, window: QWidget) -> None:
        super().__init__(table)
        self.table, self.model, self.window = table, model, window
        self.following = True
        self.unseen = UnseenRows()
        self._moving = 0  # > 0 while this controller scrolls or selects itself
        self._pointer_in = False  # the pointer is over the rows
        self._pressed = False  # a mouse button is down on the rows
        self.pill = NewEventsPill(table)
        self.pill.clicked.connect(self.jump_to_newest)
        bar = table.verticalScrollBar()
        bar.actionTriggered.connect(self._user_scrolled)  # drags, wheel, arrows, page clicks: never setValue
        bar.valueChanged.connect(lambda _v: self.check_seen())
        model.rowsInserted.connect(self._rows_inserted)
        model.rowsRemoved.connect(self._rows_removed)
        model.modelReset.connect(self._reset)
        model.rows_arrived.connect(self._rows_arrived)
        table.selectionModel().currentRowChanged.connect(self._current_changed)
        window.installEventFilter(self)
        self.viewport = table.viewport()
        self.viewport.installEventFilter(
            self
        )  # its size is final when its Resize arrives (the table's is not)

    @property
    def count(self) -> int:
        return self.unseen.count

    @property
    def held(self) -> bool:
        """Whether the user's pointer is on the rows: then nothing moves under it, Follow or not."""
        return self._pointer_in or self._pressed

    def _pointer(self, inside: bool | None = None, pressed: bool | None = None) -> None:
        was = self.held
        if inside is not None:
            self._pointer_in = inside
        if pressed is not None:
            self._pressed = pressed
        if was and not self.held and self.following:
            self._to_top()  # the pointer left: the rows that waited come into view

    # -- the toggle ----------------------------------------------------------------------------------------
    def set_following(self, on: bool) -> None:
        if on == self.following:
            if on:
                self._to_top()
            return
        self.following = on
        if on:
            self._to_top()
        self.following_changed.emit(on)
        self._show_pill()

    def jump_to_newest(self) -> None:
        """The pill (or N): the newest rows into view, and keep following them."""
        self.set_following(True)
        self._to_top()

    def _to_top(self) -> None:
        self._moving += 1
        try:
            self.table.verticalScrollBar().setValue(0)
        finally:
            self._moving -= 1
        self.check_seen()

    def _user_scrolled(self, action: int) -> None:
        if self._moving or action == QAbstractSlider.SliderAction.SliderNoAction.value:
            return
        self.set_following(False)

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid() and not self._moving:
            self.set_following(False)

    def select_quietly(self, row: int) -> None:
        """Select `row` and scroll it into view for the window (a notification click), as a reader would."""
        index = self.model.index(row, 0)
        self._moving += 1
        try:
            self.table.selectionModel().setCurrentIndex(index, _SELECT_ROW)
            self.table.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)
        finally:
            self._moving -= 1
        self.set_following(False)

    # -- rows arriving -------------------------------------------------------------------------------------
    def _rows_arrived(self, n: int) -> None:
        self.unseen.arrived(n)
        bar = self.table.verticalScrollBar()
        self._moving += 1
        try:
            if self.following and not self.held:
                bar.setValue(0)
            else:
                # ScrollPerItem: the value counts rows. The scroll range is updated by a delayed layout; widen it
                # now so the new value is not clamped (the layout sets the same maximum a moment later).
                step = n if self.table.verticalScrollMode() == _PER_ITEM else n * self._row_height()
                bar.setMaximum(max(bar.maximum(), bar.value() + step))
                bar.setValue(bar.value() + step)
        finally:
            self._moving -= 1
        self.check_seen()
        self.unseen_changed.emit(self.unseen.count)

    def _row_height(self) -> int:
        return self.table.verticalHeader().defaultSectionSize()

    def _rows_inserted(self, parent: Index, first: int, last: int) -> None:
        if not parent.isValid() and first > 0:  # gap rows or the rest of a count: not new events
            self.unseen.inserted_at(first, last - first + 1)

    def _rows_removed(self, parent: Index, first: int, last: int) -> None:
        if not parent.isValid():
            self.unseen.removed_at(first, last - first + 1)

    def _reset(self) -> None:
        """A new filter or tenant: a different set of rows, none of them "new"; the view shows the newest (not
        wherever the old rows had it), so nothing newer hides above it uncounted."""
        if self.unseen.count:
            self.unseen.clear()
            self.unseen_changed.emit(0)
        self._moving += 1
        try:
            self.table.verticalScrollBar().setValue(0)
        finally:
            self._moving -= 1
        self._show_pill()

    # -- what is on screen ---------------------------------------------------------------------------------
    def looking(self) -> bool:
        w = self.window
        return w.isVisible() and not w.isMinimized() and w.isActiveWindow()

    def visible_rows(self) -> tuple[int, int]:
        """First and last row with any pixel in the viewport ((0, -1) when none)."""
        rows = self.model.rowCount()
        if rows == 0:
            return 0, -1
        top = self.table.rowAt(0)
        bottom = self.table.rowAt(self.table.viewport().height() - 1)
        top = 0 if top < 0 else top
        return top, rows - 1 if bottom < 0 else bottom

    def check_seen(self) -> None:
        if self.unseen.count and self.looking():
            first, last = self.visible_rows()
            if self.unseen.seen(first, last):
                self.unseen_changed.emit(self.unseen.count)
        self._show_pill()

    def _show_pill(self) -> None:
        top = self.unseen.first()
        first, _last = self.visible_rows()
        above = top is not None and top < first  # some unseen rows are above the viewport
        self.pill.show_count(self.unseen.count if above else 0)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if watched is self.viewport:
            if kind == QEvent.Type.Resize:
                self.pill.place()
            elif kind in (QEvent.Type.Enter, QEvent.Type.MouseMove):
                self._pointer(inside=True)
            elif kind == QEvent.Type.Leave:
                self._pointer(inside=False)
            elif kind == QEvent.Type.MouseButtonPress:
                self._pointer(inside=True, pressed=True)
            elif kind == QEvent.Type.MouseButtonRelease:
                self._pointer(pressed=False)
        elif watched is self.window and kind == QEvent.Type.WindowDeactivate:
            self._pointer(inside=False, pressed=False)  # a Leave may never come while another window has it
        if (watched is self.window and kind in _WINDOW_EVENTS) or (
            watched is self.viewport and kind == QEvent.Type.Resize
        ):
            self.check_seen()
        return False


_WINDOW_EVENTS = (QEvent.Type.WindowActivate, QEvent.Type.Show, QEvent.Type.WindowStateChange)
_PER_ITEM = QAbstractItemView.ScrollMode.ScrollPerItem
_SELECT_ROW = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
