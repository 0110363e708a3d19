"""Reading while events arrive: the Follow toggle, keeping the reader's rows in place, and the unseen count.

What Follow means in each situation is decided in one place, the Qt-free state machine of view/follow_state.py
(LIVE, READING, PAST); this controller tells it what the user did and what the window is like, and carries out
what it answers: scroll to the newest, drop the picked row, count rows as seen, keep every row on screen at its
pixel while rows go in above, say why Follow cannot hold in a range that has ended.

The facts are read from the window as it is, not remembered from events that may never come: "looking" is the
window shown, not minimized and active; "held" is the pointer over the rows of the active window (asked of the
pointer itself each time it matters, so a release or a leave that went to another window cannot leave the table
frozen), once the user put it there: rows that come in under a pointer resting where the window opened hold
nothing. Rows the user has not had on screen while looking are counted (view/unseen_rows.py); the pill over the
table (new_events_pill.py) shows them when they are above the view and goes to the newest.
"""

from __future__ import annotations

from datetime import UTC, datetime

from PySide6.QtCore import (
    QEvent,
    QItemSelectionModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Signal,
)
from PySide6.QtGui import QCursor, QGuiApplication
from PySide6.QtWidgets import QAbstractItemView, QAbstractSlider, QTableView, QWidget

from tenant_events.ui.window.table.event_table_model import EventTableModel
from tenant_events.ui.window.table.new_events_pill import NewEventsPill
from tenant_events.view.follow_state import FollowState, Mode, Moves
from tenant_events.view.unseen_rows import UnseenRows

Index = QModelIndex | QPersistentModelIndex


class FollowController(QObject):
    """Owns scrolling on new rows and the unseen count for one table (see the module docstring)."""

    following_changed = Signal(bool)
    mode_changed = Signal(object)  # view.follow_state.Mode
    unseen_changed = Signal(int)
    said = Signal(str)  # a line for the user: why Follow cannot hold here
    unpicked = Signal()  # no row read any more (N, the pill, Follow), nor one still being found again

    def __init__(self, table: QTableView, model: EventTableModel, window: QWidget) -> None:
        super().__init__(table)
        self.table, self.model, self.window = table, model, window
        self.state = FollowState()
        self.unseen = UnseenRows()
        self._counted = 0  # the count last announced by unseen_changed
        self._moving = 0  # > 0 while this controller scrolls or selects itself
        self.user_moves = (
            0  # the view moved by the user (wheel, scroll bar, keys): a lookup's answer stays put
        )
        self._put = False  # the pointer was put on a row (see _pointer_on_rows)
        self._shown_mode = self.state.mode  # what following_changed and mode_changed last said
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
        table.setCurrentIndex(QModelIndex())  # a current index "set": focusing the table picks no row itself
        window.installEventFilter(self)
        # The window system's focus, not only the widgets' activation: brought back from the tray, a window can
        # hold the focus without Qt's widgets ever being told they are active again.
        app = QGuiApplication.instance()
        if isinstance(app, QGuiApplication):
            app.focusWindowChanged.connect(self._focus_moved)  # a method: gone with this controller
        self.viewport = table.viewport()
        self.viewport.setMouseTracking(True)  # moves without a button: the pointer put on a row holds it
        self.viewport.installEventFilter(
            self
        )  # its size is final when its Resize arrives (the table's is not)

    @property
    def following(self) -> bool:
        return self.state.following

    @property
    def mode(self) -> Mode:
        return self.state.mode

    @property
    def count(self) -> int:
        return self.unseen.count

    @property
    def held(self) -> bool:
        return self.state.held

    # -- the reader's commands -----------------------------------------------------------------------------
    def set_following(self, on: bool) -> None:
        """The Follow toggle (F, the menu, the corner button) asked for `on`."""
        if on != self.following:
            self._apply(self.state.toggle())
        else:
            self._apply(self.state.jump() if on else Moves())
        self.following_changed.emit(self.following)  # a refusal (PAST) puts the toggle back

    def jump_to_newest(self) -> None:
        """The pill (or N): the newest rows into view, and keep following them."""
        self._apply(self.state.jump())

    def select_quietly(self, row: int, scroll: bool = True) -> None:
        """Select `row` and scroll it into view for the window (a notification click, J/K), as a reader would;
        `scroll` False: where the user moved the view meanwhile, it stays."""
        index = self.model.index(row, 0)
        self._moving += 1
        self.table.setAutoScroll(scroll)  # (Qt scrolls to a new current row itself)
        try:
            self.table.selectionModel().setCurrentIndex(index, _SELECT_ROW)
            if scroll:
                self.table.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)
        finally:
            self.table.setAutoScroll(True)
            self._moving -= 1
        self._apply(self.state.picked())

    def _user_scrolled(self, action: int) -> None:
        if self._moving or action == QAbstractSlider.SliderAction.SliderNoAction.value:
            return
        self.user_moves += 1
        at_top = (
            self.table.verticalScrollBar().sliderPosition() == 0
        )  # the action's position, not yet the value
        self._apply(self.state.scrolled(at_top, self.table.currentIndex().isValid()))

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid() and not self._moving:
            self._apply(self.state.picked())

    # -- carrying out a transition ---------------------------------------------------------------------------
    def _apply(self, moves: Moves, inserted: int = 0) -> None:
        self._moving += 1
        try:
            if moves.unpick:
                self.table.selectionModel().clearSelection()
                self.table.setCurrentIndex(QModelIndex())
            bar = self.table.verticalScrollBar()
            if moves.to_top:
                bar.setValue(0)
            elif moves.keep_place and inserted:
                # ScrollPerItem: the value counts rows. The scroll range is updated by a delayed layout; widen it
                # now so the new value is not clamped (the layout sets the same maximum a moment later).
                step = (
                    inserted
                    if self.table.verticalScrollMode() == _PER_ITEM
                    else inserted * self._row_height()
                )
                bar.setMaximum(max(bar.maximum(), bar.value() + step))
                bar.setValue(bar.value() + step)
        finally:
            self._moving -= 1
        if moves.unpick:
            self.unpicked.emit()
        if moves.all_seen:
            self.unseen.clear()
        if moves.say:
            self.said.emit(moves.say)
        if self.state.mode is not self._shown_mode:  # (the machine moved before this was called)
            self._shown_mode = self.state.mode
            self.following_changed.emit(self.following)
            self.mode_changed.emit(self.state.mode)
        self.check_seen()

    def _row_height(self) -> int:
        return self.table.verticalHeader().defaultSectionSize()

    # -- rows arriving -------------------------------------------------------------------------------------
    def _rows_arrived(self, n: int) -> None:
        self.unseen.arrived(n)
        self._hold(self._pointer_on_rows())  # as the pointer is now, whatever events were missed
        self._apply(self.state.arrived(), inserted=n)

    def _rows_inserted(self, parent: Index, first: int, last: int) -> None:
        if not parent.isValid() and first > 0:  # gap rows or the rest of a count: not new events
            self.unseen.inserted_at(first, last - first + 1)

    def _rows_removed(self, parent: Index, first: int, last: int) -> None:
        if not parent.isValid():
            self.unseen.removed_at(first, last - first + 1)

    def _reset(self) -> None:
        """A new filter or tenant: a different set of rows, none of them "new", shown from the newest. The window
        picks the row being read again afterwards if it still matches (a `picked`, so READING)."""
        self.unseen.clear()
        self._moving += 1
        try:
            self.table.setCurrentIndex(QModelIndex())  # the view forgot its current index: "set" it again
        finally:
            self._moving -= 1
        until = self.model.event_filter.until
        self._apply(self.state.reset(range_open=until is None or until > datetime.now(UTC), kept=False))

    # -- what is on screen ---------------------------------------------------------------------------------
    def looking(self) -> bool:
        w = self.window
        return w.isVisible() and not w.isMinimized() and self._active()

    def _active(self) -> bool:
        handle = self.window.windowHandle()
        return self.window.isActiveWindow() or (handle is not None and handle.isActive())

    def _on_a_row(self) -> bool:
        vp = self.viewport
        at = vp.mapFromGlobal(QCursor.pos())
        return vp.rect().contains(at) and self.table.rowAt(at.y()) >= 0

    def _pointer_on_rows(self) -> bool:
        """Whether the pointer is over a row of the active window, asked of the pointer now, and was put there:
        rows that came in under a pointer that has not moved since (the window opened under it, its backlog
        arriving) hold nothing, so they come in at the top, newest first, as without the pointer."""
        vp = self.viewport
        if not (self._put and self._active() and vp.isVisible()):
            return False
        return self._on_a_row()

    def _hold(self, held: bool) -> None:
        if held != self.state.held:
            self._apply(self.state.hold(held))

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
        """Rows on screen while the window is looked at are seen; the pill and the count follow."""
        if self.unseen.count and self.looking():
            first, last = self.visible_rows()
            self.unseen.seen(first, last)
        top = self.unseen.first()
        first, _last = self.visible_rows()
        if (
            self.state.following and self.state.held
        ):  # the rows waiting above the pointer (seen, if looked at)
            self.pill.show_count(first)
        else:
            above = top is not None and top < first  # some unseen rows are above the viewport
            self.pill.show_count(self.unseen.count if above else 0)
        if self.unseen.count != self._counted:
            self._counted = self.unseen.count
            self.unseen_changed.emit(self._counted)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if watched is self.viewport:
            if kind == QEvent.Type.Resize:
                self.pill.place()
                self.check_seen()
            elif kind in _POINTER_EVENTS:
                # put on a row by the user: it moved, came in or pressed there (a leave or a move off the rows
                # takes it away)
                self._put = kind != QEvent.Type.Leave and self._on_a_row()
                self._hold(self._pointer_on_rows())
        elif watched is self.window and kind in _WINDOW_EVENTS:
            self._relook()
        return False

    def _focus_moved(self, _window: object) -> None:
        self._relook()

    def _relook(self) -> None:
        # the pointer's hold first when it holds (nothing may move under a click that activates the window),
        # last when it lets go (rows that come into view as the window goes are not seen)
        held = self._pointer_on_rows()
        if held:
            self._hold(True)
        self._apply(self.state.look(self.looking()))
        if not held:
            self._hold(False)


_WINDOW_EVENTS = (
    QEvent.Type.WindowActivate,
    QEvent.Type.WindowDeactivate,
    QEvent.Type.Show,
    QEvent.Type.Hide,
    QEvent.Type.WindowStateChange,
)
_POINTER_EVENTS = (
    QEvent.Type.MouseMove,
    QEvent.Type.Enter,
    QEvent.Type.Leave,
    QEvent.Type.MouseButtonPress,
    QEvent.Type.MouseButtonRelease,
)
_PER_ITEM = QAbstractItemView.ScrollMode.ScrollPerItem
_SELECT_ROW = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
