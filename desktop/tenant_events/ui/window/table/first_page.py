"""A query's first page, read on a worker thread: the UI stays responsive while the store scans.

A query-line term such as `user:*ville` (a leading wildcard) cannot use an index: finding the newest 256 matches
may walk the whole store (~0.9 s on 1M events). The filter bar's change goes here instead of straight to the
model; while the worker reads, the table keeps the old rows, the count says "Searching…" and `busy` is True.
Only the newest request is applied (a query typed on while an older one runs replaces it). Showing another
tenant (or a tenant added) goes the same way, query or not, the table empty meanwhile ("Loading…" without a
query): a year's newest rows come through DuckDB, and the window must not wait on it:

    start(flt) ─▶ worker: head, first page (aggregates' reader) ─▶ model.show_first_page
                                                                └▶ count_needed → total, oldest match (window)
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol

from PySide6.QtCore import QObject, Qt, Signal, SignalInstance
from PySide6.QtWidgets import QTableView

from tenant_events.errors import StorageError
from tenant_events.ui.task_set import TaskSet
from tenant_events.ui.window.background_reads import read_in_background
from tenant_events.ui.window.filters.filter_bar import FilterBar
from tenant_events.ui.window.table.event_table_model import PAGE, EventTableModel
from tenant_events.values.events import EventFilter, StoredEvent
from tenant_events.view.tenant_reader import TenantReader

REOPEN_TRIES, REOPEN_WAIT_S = 30, 0.1
SEARCHING = "Searching…"
LOADING = "Loading…"  # a tenant's newest rows, no query


def read_first_page(reader: TenantReader, flt: EventFilter) -> tuple[int, list[StoredEvent]]:
    """On the worker: the snapshot's head and its first page."""
    head = reader.head_seq()
    return head, reader.page(flt, head, 0, PAGE)


def count_and_oldest(reader: TenantReader, flt: EventFilter, head: int) -> tuple[int, int]:
    """On the worker, after a filter change: the total, and the oldest matching seq (0: none). A jump down the
    scrollbar before the page keys arrive estimates from the oldest match; looking it up can take as long as a
    full scan (a time range: ~0.7 s on 1M events, the scan starts at the oldest row), so never on the UI
    thread."""
    total = reader.count(flt, head)
    oldest = reader.newer(flt, 0, head, 1) if total else []
    return total, oldest[0].seq if oldest else 0


class FirstPageReader(QObject):
    busy_changed = Signal(bool)
    applied = Signal()  # the model shows the newest request's first page

    def __init__(
        self,
        model: EventTableModel,
        search_reader: Callable[[], TenantReader | None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._model = model
        self._search_reader = search_reader  # the current tenant's reader for a query's first page
        self._request = 0
        self.pending: EventFilter | None = None
        self._tasks = TaskSet()
        self._stopped = False  # the window shut down: its stores are being closed

    @property
    def busy(self) -> bool:
        return self.pending is not None

    def start(self, flt: EventFilter) -> bool:
        """Read `flt`'s first page on a worker; False when there is no tenant to read (apply it directly)."""
        reader = self._search_reader()
        if reader is None:
            return False
        if self._stopped:
            return True  # the app is quitting: nothing more is read, nor shown
        self._request += 1
        was_busy, self.pending = self.busy, flt
        self._tasks.spawn(self._read(self._request, reader, flt))
        if not was_busy:
            self.busy_changed.emit(True)
        return True

    def take(self, flt: EventFilter, on_loop: bool) -> bool:
        """True when `flt` is a query whose first page is now read on a worker; otherwise a pending read is
        dropped (the caller applies `flt` itself, and it wins). True too for the filter being read said again
        (Enter once more in the search line): its read goes on, and its rows are shown."""
        if self.pending is not None and flt == self.pending:
            return True
        if flt.query and on_loop and self.start(flt):
            return True
        self.cancel()
        return False

    def cancel(self) -> None:
        """A newer filter applied the usual way wins over a query still being read."""
        if self.pending is not None:
            self._request += 1
            self.pending = None
            self.busy_changed.emit(False)

    async def stop(self) -> None:
        """The window shuts down: a page still being read is dropped, its task ended."""
        self._stopped = True
        self.cancel()
        await self._tasks.cancel()

    async def wait(self) -> None:
        """Until the pending request (if any) is applied or dropped."""
        await self._tasks.wait()

    async def _read(self, request: int, reader: TenantReader, flt: EventFilter) -> None:
        try:
            read = await self._read_page(request, reader, flt)
            if read is None:
                return  # its tenant was removed (its store closed), or a newer filter came, while it was read
            head, first = read
        except BaseException:
            if request == self._request:
                self.pending = None
                self.busy_changed.emit(False)
            raise
        if request != self._request:
            return  # a newer filter replaced this one while the worker read
        self.pending = None
        self._model.show_first_page(flt, head, first)
        self.busy_changed.emit(False)
        self.applied.emit()

    async def _read_page(
        self, request: int, reader: TenantReader, flt: EventFilter
    ) -> tuple[int, list[StoredEvent]] | None:
        """The page; None when the request is no longer wanted by the time its store failed. A store being opened
        again (by its writer, for milliseconds) is waited for, a few seconds at most."""
        for _ in range(REOPEN_TRIES):
            try:
                return await read_in_background(read_first_page, reader, flt)
            except StorageError:
                if request != self._request:
                    return None
                await asyncio.sleep(REOPEN_WAIT_S)
        return await read_in_background(read_first_page, reader, flt)


class Window(Protocol):
    """What of the main window the first pages touch (no import of it: it imports this module)."""

    @property
    def model(self) -> EventTableModel: ...
    @property
    def table(self) -> QTableView: ...
    @property
    def filter_bar(self) -> FilterBar: ...
    @property
    def tenant_shown(self) -> SignalInstance: ...
    def schedule_aggregates(self, now: bool = False) -> None: ...


def attach(w: Window, search_reader: Callable[[], TenantReader | None]) -> FirstPageReader:
    """The window's reader of first pages (`search_reader`: the current tenant's, for a query): its busy state
    ("Searching…", a busy cursor over the table), and the aggregates once a first page is shown (when it is
    the whole result; else after the count)."""
    reader = FirstPageReader(w.model, search_reader)

    def busy(on: bool) -> None:
        if on:
            query = reader.pending is not None and bool(reader.pending.query)
            w.filter_bar.count_label.setText(SEARCHING if query else LOADING)
            w.table.viewport().setCursor(Qt.CursorShape.BusyCursor)
        else:
            w.table.viewport().unsetCursor()

    def shown() -> None:
        if not w.model.counting:
            w.schedule_aggregates(now=True)

    reader.busy_changed.connect(busy)
    w.tenant_shown.connect(lambda _name: reader.cancel())  # another tenant's store: a pending page is not its
    reader.applied.connect(shown)
    return reader
