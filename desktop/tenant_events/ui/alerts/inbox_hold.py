"""The inbox holds still under the reader, as the event table does (ui/window/table/follow.py): while the pointer
rests on the list of alerts, or an alert is selected and the reader is on the inbox reading it, alerts that fire
or change do not move a row. The rows already listed are repainted in place (a count, a state); new alerts, and
alerts whose latest activity would take them elsewhere, wait — the "↑ N new alerts" pill counts them — and take
their place, by latest activity, once the pointer leaves (or the pill is clicked).

The facts are read from the window as it is, each time they matter, never remembered from events that may not
come: "on the list" is the pointer over the list's rows as the window system says (Qt's enter and leave), or as
the pointer is, in the active inbox; "reading" is a selected alert with the pointer on the active inbox.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Signal
from PySide6.QtGui import QCursor
from PySide6.QtWidgets import QTableView, QWidget

from tenant_events.ui.window.table.new_events_pill import NewEventsPill


class InboxHold(QObject):
    """Whether the inbox's rows must hold still now, and `released` when they no longer must."""

    released = Signal()  # the pointer left (or the pill was clicked): the waiting alerts take their place

    def __init__(self, window: QWidget, table: QTableView, reading: Callable[[], bool]) -> None:
        super().__init__(window)
        self.window, self.table, self._reading = window, table, reading
        self.viewport = table.viewport()
        self.pill = NewEventsPill(
            table, noun="alert", tip="Show the alerts that fired since, in their place by latest activity"
        )
        self.pill.clicked.connect(self.released)
        self._was = False
        self.viewport.installEventFilter(self)
        window.installEventFilter(self)

    def held(self) -> bool:
        """Whether nothing may move: the pointer on the list, or an alert selected and being read."""
        w = self.window
        if not w.isVisible() or w.isMinimized():
            return False
        active = w.isActiveWindow()
        vp = self.viewport
        on_list = vp.underMouse() or (active and vp.rect().contains(vp.mapFromGlobal(QCursor.pos())))
        reading = active and self._reading() and w.rect().contains(w.mapFromGlobal(QCursor.pos()))
        self._was = on_list or reading
        return self._was

    def waiting(self, n: int) -> None:
        """`n` alerts wait for the pointer to leave (0: none)."""
        self.pill.show_count(n)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in _CHANGES and self._was and not self.held():
            self.released.emit()
        return False


_CHANGES = (
    QEvent.Type.Leave,
    QEvent.Type.Enter,
    QEvent.Type.MouseButtonRelease,
    QEvent.Type.WindowDeactivate,
    QEvent.Type.Hide,
    QEvent.Type.WindowStateChange,
)
