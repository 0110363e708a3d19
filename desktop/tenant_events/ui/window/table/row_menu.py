"""The table's context menu (right-click, the Menu key or Shift+F10 on a row): filter to the cell's value or
exclude it, copy the value, the event or its JSONL line, and open the event's object in the tenant's dashboard.

The window is reached through `RowMenuHost`, so this module knows nothing of the window's insides.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Protocol

from PySide6.QtCore import QModelIndex, QPoint, Qt, QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import QMenu, QTableView

from tenant_events.ui.window.filters.filter_bar import FilterBar
from tenant_events.ui.window.table.event_table_model import HEADERS, Col, EventTableModel
from tenant_events.values.events import StoredEvent
from tenant_events.view import event_text
from tenant_events.view.cell_filter import FilterChoice, choices, minute_around


class RowMenuHost(Protocol):
    def read_full(self, ev: StoredEvent, answer: Callable[[StoredEvent], None]) -> None: ...
    def dashboard_url_for(self, ev: StoredEvent) -> str | None: ...
    def show_tenant(self, name: str) -> None: ...
    def confirm(self, text: str) -> None: ...


class RowMenu:
    def __init__(self, table: QTableView, model: EventTableModel, bar: FilterBar, host: RowMenuHost) -> None:
        self.table, self.model, self.bar, self.host = table, model, bar, host
        self.menu: QMenu | None = None  # the open menu (tests drive it)
        self.extras: list[Callable[[QMenu, QModelIndex, StoredEvent], None]] = []  # more entries (timelines)
        self._asked = 0  # the newest menu asked for: an older one's event read later opens no menu
        table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        table.customContextMenuRequested.connect(self._requested)

    def _requested(self, pos: QPoint) -> None:
        index = self.table.indexAt(pos)
        if not index.isValid():
            index = self.table.currentIndex()  # the Menu key over empty space: the current row
        self.open(index, pos)

    def open_at_current(self) -> None:
        """The menu for the current cell, below it (Shift+F10: the keyboard's way in)."""
        index = self.table.currentIndex()
        if index.isValid():
            self.open(index, self.table.visualRect(index).bottomLeft())

    def open(self, index: QModelIndex, pos: QPoint) -> None:
        """The menu for the cell at `index`, at `pos` of the viewport, once its event is read as stored (the host
        reads it off the UI thread: over a year's archive 0.1-0.5 s). Not opened when the user moved on meanwhile:
        another menu asked for, another current row, or the row holding another event."""
        ev = self.model.event_at(index.row()) if index.isValid() else None
        if ev is None:
            return
        self._asked += 1
        asked, current = self._asked, self.table.currentIndex().row()

        def answer(full: StoredEvent) -> None:
            if asked != self._asked or self.table.currentIndex().row() != current:
                return
            now = self.model.event_at(index.row()) if index.isValid() else None
            if now is None or now.seq != ev.seq:
                return
            self.build(index, full).popup(self.table.viewport().mapToGlobal(pos))

        self.host.read_full(ev, answer)

    def build(self, index: QModelIndex, full: StoredEvent) -> QMenu:
        """The menu for the cell at `index`, whose row's event as stored is `full`."""
        ev = self.model.event_at(index.row()) or full
        col = Col(index.column())
        cell = str(self.model.data(index) or "")
        if self.menu is not None:
            self.menu.close()
        menu = QMenu(self.table)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        menu.setAccessibleName("Event actions")
        menu.destroyed.connect(lambda _o=None, m=menu: self._forget(m))
        data = event_text.data_of(full.raw)
        searched = ev.summary if col == Col.SUMMARY else cell  # the stored summary (ids): what search matches
        sentence = self.model.names.sentence(ev.seq)  # what the row calls the ids it names
        names = {m.id: m.label for m in sentence.mentions} if sentence is not None else {}
        for choice in choices(col.name, searched, full.type, full.time, full.purpose, data, names):
            menu.addAction(choice.label, partial(self.apply, choice))
        menu.addSeparator()
        name = HEADERS[col].lower()
        copy_value = menu.addAction(f"Copy {name}", lambda: self.copy(cell, f"Copied the {name}"))
        copy_value.setEnabled(bool(cell))
        has_raw = full.raw is not None
        menu.addAction(
            "Copy event", lambda: self.copy(event_text.pretty(full.raw), "Copied the event as JSON")
        )
        menu.addAction(
            "Copy as JSONL",
            lambda: self.copy(
                event_text.jsonl_line(full.type, full.offset, full.raw or ""),
                "Copied the event as a JSONL line",
            ),
        )
        for act in menu.actions()[-2:]:
            act.setEnabled(has_raw)
        menu.addSeparator()
        url = self.host.dashboard_url_for(full)
        open_it = menu.addAction("Open in dashboard", lambda: self.open_url(url or ""))
        open_it.setEnabled(url is not None)
        if url is None:
            open_it.setToolTip("This tenant's domain or this event's object has no dashboard page")
        for extra in self.extras:
            extra(menu, index, full)
        self.menu = menu
        return menu

    def _forget(self, menu: QMenu) -> None:
        if self.menu is menu:
            self.menu = None

    def apply(self, choice: FilterChoice) -> None:
        apply_choice(self.bar, choice, self.host.show_tenant)

    def copy(self, text: str, confirmation: str) -> None:
        if text:
            QGuiApplication.clipboard().setText(text)
            self.host.confirm(confirmation)

    def open_url(self, url: str) -> None:
        if url:
            QDesktopServices.openUrl(QUrl(url))


def apply_choice(bar: FilterBar, choice: FilterChoice, show_tenant: Callable[[str], None]) -> None:
    """Make the filter bar show what `choice` says (one filter change, like the user setting it by hand)."""
    if choice.kind == "type":
        if choice.exclude:
            shown = set(bar.selected_types()) or set(bar.type_actions)
            bar.set_types(shown - {choice.value})
        else:
            bar.set_types({choice.value})
    elif choice.kind == "text":
        bar.search.setText(choice.value)
        bar.search.returnPressed.emit()  # apply now, not after the typing pause
    elif choice.kind == "time":
        span = minute_around(choice.value)
        if span is not None:
            bar.set_custom_range(*span)
    elif choice.kind == "test":
        bar.test_box.setChecked(not choice.exclude)
    elif choice.kind == "tenant":
        show_tenant(choice.value)
