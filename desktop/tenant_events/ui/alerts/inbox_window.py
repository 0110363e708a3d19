"""The alerts inbox: every tenant's alerts, the one that fired last first (each column sorts); the events behind
one; mark read; triage; jump to the table.

    ┌ 3 unread · 12 alerts ─────────────────────────────────────────────── [Mark all read] ┐
    │ Severity   Alert                    State         Events  Tenant  Last firing          │
    │ ▲ Critical Mass deletion × 2        Firing        50      demo    14:32:05 (bold: unread) │
    ├──────────────────────────────────────────────────────────────────────────────┤
    │ why (presentation.why_line) · the events behind it · [Show these events in the table] │
    └──────────────────────────────────────────────────────────────────────────────┘

Widgets only: the alerts come from an `AlertBook`, the events behind one from `load_events` (the app's
readers). Double-clicking an event opens it in the table; the button filters the table to the alert's events.

While the pointer rests on the list, or an alert is selected and being read, alerts that fire do not move a row
under the reader: they wait, counted by a "↑ N new alerts" pill, and take their place by latest activity once
the pointer leaves (inbox_hold.py).

One rule marks an alert read: opening it, whether by selecting it here (mouse or keys), by clicking its
notification or tray entry (`open_alert`), or by showing the inbox again on the alert it was left on (the reader
looks at it again). A selection the inbox restores after a reload while it is shown is not an opening. The
selection is restored through the selection model, never through the rows' geometry (which a hidden window does
not keep up to date), so the alert selected is the one the detail and the triage row show and act on.

A window of its own, not a dialog of the main window: the main window can cover it (a dialog is kept above the
window it belongs to), and "Show these events in the table" brings the main window to the front over it.
"""

from __future__ import annotations

import html
from collections.abc import Callable

from PySide6.QtCore import QItemSelection, QItemSelectionModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from tenant_events.alerts.presentation import why_line
from tenant_events.ui.alerts.alert_book import AlertBook, InboxEntry
from tenant_events.ui.alerts.inbox_hold import InboxHold
from tenant_events.ui.alerts.inbox_model import Col, InboxModel, local_time
from tenant_events.ui.alerts.noise_menu import NoiseMenu
from tenant_events.ui.alerts.triage_bar import TriageBar
from tenant_events.values.events import StoredEvent

EventLoader = Callable[[str, list[int]], list[StoredEvent]]  # profile, seqs → stored events
_SELECT_ROW = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
MAX_LISTED = 200


class InboxWindow(QDialog):
    events_requested = Signal(object, list)  # InboxEntry, [StoredEvent]: filter the table to them
    event_requested = Signal(str, int)  # profile, seq: open one event in the table
    read_changed = Signal()  # read marks changed: unread counts elsewhere

    def __init__(self, book: AlertBook, load_events: EventLoader, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # a normal window (no parent and not a dialog: either makes X keep it above the main window)
        self.setWindowFlags(Qt.WindowType.Window)
        self.setWindowTitle("Alerts — Tenant Events")
        self.resize(900, 620)
        self.book = book
        self.load_events = load_events
        self.shown_events: list[StoredEvent] = []
        self.summary = QLabel()
        self._restoring = False  # reload() re-selecting the current alert: not an opening
        self.mark_all_button = QPushButton("Mark &all read")
        self.mark_all_button.setToolTip("Mark every listed alert read; opening an alert marks it read")
        self.mark_all_button.clicked.connect(self.mark_all_read)
        self.mark_all_button.setAutoDefault(False)  # Enter in the list is not "mark all read"
        top = QHBoxLayout()
        top.addWidget(self.summary, 1)
        top.addWidget(self.mark_all_button)

        self.model = InboxModel()
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setAccessibleName("Alerts")
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(Col.ALERT, QHeaderView.ResizeMode.Stretch)
        self.table.setSortingEnabled(True)  # the header sorts; the model keeps the order over reloads
        header.setSortIndicator(Col.TIME, Qt.SortOrder.DescendingOrder)
        self.table.selectionModel().selectionChanged.connect(self._selected)
        self.table.doubleClicked.connect(lambda _i: self.show_in_table())
        self.hold = InboxHold(self, self.table, lambda: self.current() is not None)
        self.hold.released.connect(lambda: self.reload(place=True))

        self.why = QLabel("Pick an alert to see why it was raised and the events behind it.")
        self.why.setWordWrap(True)
        self.why.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.event_list = QListWidget()
        self.event_list.setAccessibleName("Events behind the alert")
        self.event_list.itemActivated.connect(self._event_activated)
        self.event_list.itemDoubleClicked.connect(self._event_activated)
        self.table_button = QPushButton("&Show these events in the table")
        self.table_button.setEnabled(False)
        self.table_button.clicked.connect(self.show_in_table)
        self.table_button.setAutoDefault(False)
        self.triage = TriageBar(book.database_file)
        self.triage.changed.connect(self._triaged)
        self.quiet = NoiseMenu()
        detail = QWidget()
        lower = QVBoxLayout(detail)
        lower.setContentsMargins(0, 0, 0, 0)
        lower.addWidget(self.why)
        lower.addWidget(self.triage)
        lower.addWidget(self.event_list, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.table_button)
        buttons.addWidget(self.quiet)
        buttons.addStretch(1)
        lower.addLayout(buttons)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(detail)
        splitter.setSizes([330, 260])
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(splitter, 1)
        self.reload()

    # -- contents --------------------------------------------------------------------------------------------
    def reload(self, *, place: bool = False) -> None:
        """Read the alerts again, keeping the selection. While the rows hold still under the reader (inbox_hold.py)
        only the listed rows change, in place, unless `place` (the inbox opened, the pill clicked, the pointer
        gone): then every alert takes its place by latest activity."""
        entries = self.book.entries()
        current = self.current()
        if not place and self.hold.held():
            self.hold.waiting(self.model.update_in_place(entries))
            if (
                self.current() != current
            ):  # the alert being read changed (triaged, fired again): its detail too
                self._restoring = True
                try:
                    self._selected(QItemSelection(), QItemSelection())
                finally:
                    self._restoring = False
            self._count(entries)
            return
        self._restoring = True
        try:
            self.model.set_entries(entries)
            if current is None or not self.select(current.profile, current.alert.id, quiet=True):
                self._selected(QItemSelection(), QItemSelection())  # gone: nothing shown, nothing to triage
        finally:
            self._restoring = False
        self.hold.waiting(0)
        self._count(entries)

    def show_latest(self) -> None:
        """Opened again: the top of the list, where the latest activity is (the selection stays)."""
        self.table.scrollToTop()

    def _count(self, entries: list[InboxEntry] | None = None) -> None:
        """The counts over every alert, those waiting to take their place too."""
        listed = self.model.entries if entries is None else entries
        unread = sum(1 for e in listed if not e.alert.read)
        total = len(listed)
        self.summary.setText(
            f"{unread} unread · {total} alert{'' if total == 1 else 's'}" if total else "No alerts yet."
        )
        self.mark_all_button.setEnabled(unread > 0)

    def current(self) -> InboxEntry | None:
        rows = self.table.selectionModel().selectedRows()
        return self.model.entry(rows[0].row()) if rows else None

    def select(self, profile: str, alert_id: int, *, quiet: bool = False) -> bool:
        """Select one alert (a notification was clicked); False if it is not in the list."""
        row = self.model.row_of(profile, alert_id)
        if row is None:
            return False
        index = self.model.index(row, 0)
        # the selection model itself: QTableView.selectRow goes through the rows' pixels, stale while hidden
        self.table.selectionModel().setCurrentIndex(index, _SELECT_ROW)
        self.table.scrollTo(index)
        if not quiet:
            self.table.setFocus()
        return True

    def showEvent(self, event: QShowEvent) -> None:
        """Shown again on the alert it was left on: the reader is looking at that alert again (an opening)."""
        super().showEvent(event)
        self._mark_opened()

    def open_alert(self, profile: str, alert_id: int) -> bool:
        """Select one alert and mark it read (its notification or tray entry was clicked), as a click here does."""
        if not self.select(profile, alert_id):
            return False
        self._mark_opened()
        return True

    def _mark_opened(self) -> None:
        """The current alert was opened: read now (in place, so the selection and scroll stay)."""
        entry = self.current()
        if entry is None or entry.alert.read or not self.book.mark_read([entry]):
            return
        fresh = self.book.get(entry.profile, entry.alert.id)
        row = self.model.row_of(entry.profile, entry.alert.id)
        if fresh is not None and row is not None:
            self.model.replace(row, fresh)
        self._count(self.book.entries())
        self.read_changed.emit()

    def _selected(self, _new: QItemSelection, _old: QItemSelection) -> None:
        entry = self.current()
        if entry is not None and not self._restoring:
            self._mark_opened()
            entry = self.current()
        self.event_list.clear()
        self.shown_events = []
        self.table_button.setEnabled(entry is not None)
        self.triage.show_entry(entry)
        self.quiet.show_entry(entry)
        if entry is None:
            self.why.setText("")
            return
        a = entry.alert
        why = why_line(a)
        self.why.setText(why_html(a.rule_name, a.severity, entry.profile, why))
        seqs = self.book.event_seqs(entry.profile, a.id)
        self.shown_events = self.load_events(entry.profile, seqs[-MAX_LISTED:])
        for ev in reversed(self.shown_events):  # newest first, like the inbox
            item = QListWidgetItem(f"{local_time(ev.time)}   {ev.type}   {ev.summary}")
            item.setData(Qt.ItemDataRole.UserRole, ev.seq)
            self.event_list.addItem(item)
        rest = a.event_count - len(self.shown_events)
        if rest > 0 and self.shown_events:
            self.event_list.addItem(f"… {rest:,} more (Show in the table)")
        elif rest > 0:  # none stored here (yet, or any more): not "25 more" after nothing
            self.event_list.addItem(f"{rest:,} event{'' if rest == 1 else 's'} (Show in the table)")

    # -- actions ---------------------------------------------------------------------------------------------
    def _triaged(self) -> None:
        self.reload()
        self.read_changed.emit()

    def mark_all_read(self) -> None:
        if self.book.mark_all_read(self.model.entries):
            self.reload()
            self.read_changed.emit()

    def show_in_table(self) -> None:
        entry = self.current()
        if entry is not None:
            self._mark_opened()
            self.events_requested.emit(entry, list(self.shown_events))

    def _event_activated(self, item: QListWidgetItem) -> None:
        entry, seq = self.current(), item.data(Qt.ItemDataRole.UserRole)
        if entry is not None and isinstance(seq, int):
            self.event_requested.emit(entry.profile, seq)

    def index_of(self, row: int) -> QModelIndex:
        return self.model.index(row, Col.ALERT)


def why_html(rule: str, severity: str, profile: str, why: str) -> str:
    """The detail label's rich text: every part escaped, since rule names come from imported files and the why
    quotes event fields (a name such as `<a href=…>` must read as written, not become a link)."""
    parts = [html.escape(p, quote=False) for p in (rule, severity, profile, why)]
    return f"<b>{parts[0]}</b> · {parts[1]} · {parts[2]}<br>{parts[3]}"
