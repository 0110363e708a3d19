""" "All tenants" in the window: when the tenant selector says so, one table over every tenant's store by event time
takes the per-tenant table's place, with the same filter bar, histogram, search, detail pane and names.

What it does not do (yet): possible-gap rows and the rejected count (per store, see each tenant), the Purpose
column's auto-hide, J/K steps and follow mode, and export. Pages, counts, the histogram and a chosen row's event
(as the tenant's own table reads it: event_actions.py) are read on worker threads; live arrivals in any tenant are
put on top within LIVE_MS.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Final, Protocol

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPoint, Qt, QTimer, SignalInstance
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHeaderView,
    QMenu,
    QSplitter,
    QStackedWidget,
    QTableView,
)

from tenant_events.entities.all_tenants_pages import AllTenantsPages, AllTenantsRow
from tenant_events.entities.sentences import Mention
from tenant_events.store.all_tenants import AllTenantsReader
from tenant_events.ui.task_set import TaskSet
from tenant_events.ui.window.all_tenants.all_tenants_model import AllTenantsTableModel
from tenant_events.ui.window.background_reads import read_in_background
from tenant_events.ui.window.detail_pane import DetailPane
from tenant_events.ui.window.event_actions import DetailSource, EventActions
from tenant_events.ui.window.filters.filter_bar import ALL_TENANTS, FilterBar
from tenant_events.ui.window.filters.histogram import Histogram
from tenant_events.ui.window.status_line import StatusLine
from tenant_events.ui.window.table.event_table_model import Col, EventTableModel
from tenant_events.ui.window.table.first_page import FirstPageReader
from tenant_events.ui.window.timeline.sentence_delegate import SentenceDelegate
from tenant_events.ui.window.timeline.timeline_controller import TimelineController, add_timeline_entries
from tenant_events.values.events import EventFilter
from tenant_events.view.aggregates import bucket_for
from tenant_events.view.tenant_reader import TenantReader
from tenant_events.view.time_range import filter_span

PAGE: Final = 200
NARROW_PX: Final = 1000  # a view narrower than this hides the Event ID column
LIVE_MS: Final = 500
AGGREGATE_MS: Final = 2000


class AllTenantsHost(Protocol):
    """What the controller uses of the main window."""

    table: QTableView
    splitter: QSplitter
    detail: DetailPane
    filter_bar: FilterBar
    histogram: Histogram
    status_line: StatusLine
    model: EventTableModel
    first_page: FirstPageReader
    tenant: str | None

    @property
    def tenant_shown(self) -> SignalInstance: ...

    @property
    def ui_readers(self) -> Any: ...
    @property
    def _tasks(self) -> TaskSet: ...
    @property
    def events(self) -> EventActions: ...
    def select_event(self, tenant: str, seq: int) -> object: ...
    def show_tenant(self, name: str) -> None: ...


def all_tenants_aggregates(reader: AllTenantsReader, f: EventFilter) -> tuple[dict[str, int], list[Any], int]:
    """Counts per type and the histogram over every store (blocking), bucketed as the per-tenant view does."""
    counts = reader.counts_by_type(f)
    span = filter_span(f)
    size = bucket_for(span[1] - span[0]) if span is not None else 60
    buckets = reader.histogram(f, size)
    if span is None and buckets:
        wanted = bucket_for(buckets[-1][0] - buckets[0][0] + 60)
        if wanted != size:
            size, buckets = wanted, reader.histogram(f, wanted)
    return counts, buckets, size


class AllTenantsController(QObject):
    def __init__(self, window: AllTenantsHost, timelines: TimelineController) -> None:
        super().__init__()
        self.w = window
        self.timelines = timelines
        self.active = False
        self.pages: AllTenantsPages | None = None
        self.filter = EventFilter()
        self._generation = 0
        self._rows_generation = 0  # whose rows are shown: the generation before until the first page is in
        self._shut = False
        self.model = AllTenantsTableModel(self)
        self.view = self._make_view()
        self.stack = QStackedWidget()
        window.splitter.replaceWidget(window.splitter.indexOf(window.table), self.stack)
        self.stack.addWidget(window.table)
        self.stack.addWidget(self.view)
        self.stack.setCurrentWidget(window.table)
        window.table.show()
        self._live = QTimer(self)
        self._live.setSingleShot(True)
        self._live.setInterval(LIVE_MS)
        self._live.timeout.connect(lambda: self._spawn(self._newer(self._generation)))
        self._counts = QTimer(self)
        self._counts.setSingleShot(True)
        self._counts.setInterval(AGGREGATE_MS)
        self._counts.timeout.connect(lambda: self._spawn(self._aggregates(self._generation)))
        self.model.more_wanted.connect(lambda: self._spawn(self._older(self._generation)))
        window.filter_bar.tenant_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        window.filter_bar.tenant_changed.connect(self._tenant_chosen)
        self._tenants = QTimer(self)  # the selector was refilled: a tenant came or went
        self._tenants.setSingleShot(True)
        self._tenants.setInterval(0)
        self._tenants.timeout.connect(self._tenants_changed)
        window.filter_bar.tenant_box.model().rowsInserted.connect(lambda *_a: self._tenants.start())
        window.filter_bar.filter_changed.connect(self._filter_changed)
        window.tenant_shown.connect(lambda _name: self.leave())

    def _make_view(self) -> QTableView:
        view = QTableView()
        view.setModel(self.model)
        view.setAccessibleName("Events of all tenants")
        view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        view.setWordWrap(False)
        view.verticalHeader().setVisible(False)
        metrics = view.fontMetrics()
        view.verticalHeader().setDefaultSectionSize(metrics.height() + 6)
        header = view.horizontalHeader()
        widths = {
            Col.TIME: "2026-11-24 23:59:59",
            Col.TYPE: "organization.member.role.assigned",
            Col.TENANT: "▇ a-longer-tenant",
            Col.PURPOSE: "Purpose",
            Col.ID: "evt_0000000000000000000",
        }
        for col, sample in widths.items():
            header.resizeSection(col, metrics.horizontalAdvance(sample) + 24)
        header.setSectionResizeMode(Col.SUMMARY, QHeaderView.ResizeMode.Stretch)
        self.delegate = SentenceDelegate(view)
        view.setItemDelegateForColumn(Col.SUMMARY, self.delegate)
        self.delegate.mention_clicked.connect(self._mention)
        view.selectionModel().currentRowChanged.connect(self._current_changed)
        view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        view.customContextMenuRequested.connect(self._menu)
        view.installEventFilter(self)
        return view

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize:  # only the view is watched
            self._fit_columns()
        return False

    def _fit_columns(self) -> None:
        """Room for the sentences: the event ID steps aside when narrow (it is in the detail pane), the Purpose
        column shows only when the page has purposes."""
        self.view.setColumnHidden(Col.ID, self.view.width() < NARROW_PX)
        self.view.setColumnHidden(Col.PURPOSE, not any(r.event.purpose for r in self.model.rows[:PAGE]))

    # -- entering and leaving -------------------------------------------------------------------------------
    def stores(self) -> dict[str, Path]:
        return {name: r.path for name, r in self.w.ui_readers.items() if isinstance(r, TenantReader)}

    def _tenant_chosen(self, name: str) -> None:
        if name == ALL_TENANTS:
            self.enter()

    def enter(self) -> None:
        if len(self.stores()) < 2:
            return
        w = self.w
        self.active = True
        w.tenant = None  # the per-tenant table, its counts and histogram rest meanwhile
        w.first_page.cancel()  # a tenant's page still being read: its late answer would clear this view's pane
        w.model.set_reader(None)
        w.events.clear_detail()
        self.timelines.show_names(None, None)
        self.stack.setCurrentWidget(self.view)
        w.status_line.state_label.setText(f"All tenants: {', '.join(self.stores())}")
        self.reload()

    def leave(self) -> None:
        if self.active:
            self.active = False
            self._generation += 1
            for timer in (self._live, self._counts):  # their reads would be for a view no longer shown
                timer.stop()
            self.stack.setCurrentWidget(self.w.table)

    def _tenants_changed(self) -> None:
        if not self.active:
            return
        if len(self.stores()) < 2:  # "All tenants" needs two: show the one left
            self.leave()
            if self.w.ui_readers:
                self.w.show_tenant(next(iter(self.w.ui_readers)))
        elif self.pages is None or self.pages.stores != self.stores():
            self.reload()

    def _filter_changed(self) -> None:
        if self.active:
            self.reload()

    def events_stored(self, tenant: str) -> None:
        if self.active and tenant in self.stores() and not self._live.isActive():
            self._live.start()

    # -- reading ----------------------------------------------------------------------------------------------
    def _pages(self) -> AllTenantsPages:
        stores = self.stores()
        if self.pages is None or self.pages.stores != stores:
            self.close()
            self.pages = AllTenantsPages(stores)
        return self.pages

    def reload(self) -> None:
        self._generation += 1
        self.filter = replace(self.w.filter_bar.current(), tenant=None)
        self._spawn(self._first(self._generation))

    def _spawn(self, coro: Any) -> None:
        if self._shut:  # the window has shut down: nothing is read for it any more
            coro.close()
            return
        try:
            self.w._tasks.spawn(coro)
        except RuntimeError:  # no event loop (a timer fired after the app's loop closed)
            coro.close()

    async def _first(self, generation: int) -> None:
        pages, f = self._pages(), self.filter
        rows = await read_in_background(pages.first, f, PAGE)
        if generation == self._generation:
            self._rows_generation = generation
            self.model.reset(rows, len(rows) < PAGE)
            self._fit_columns()
            self.w.events.clear_detail()
            await self._aggregates(generation)

    async def _older(self, generation: int) -> None:
        if self.pages is None or not self.model.rows or generation != self._rows_generation:
            return  # (rows of the filter before: the new filter's first page resets them, and what follows)
        rows = await read_in_background(self.pages.older, self.filter, self.model.rows[-1].key, PAGE)
        if generation == self._generation:
            self.model.append(rows, len(rows) < PAGE)

    async def _newer(self, generation: int) -> None:
        if self.pages is None or not self.model.rows:
            return self.reload() if self.active else None
        if generation != self._rows_generation:  # the rows of the filter left: again once the new ones are in
            return self._live.start() if generation == self._generation else None
        rows = await read_in_background(self.pages.newer, self.filter, self.model.rows[0].key, 10 * PAGE)
        # another read from the same top row may have answered first: only the rows it has not put on top
        top = self.model.rows[0].key if self.model.rows else None
        rows = [r for r in rows if top is None or r.key > top]
        if generation == self._generation and rows:
            self.model.prepend(rows)
            if not self._counts.isActive():
                self._counts.start()
        return None

    async def _aggregates(self, generation: int) -> None:
        if self.pages is None or generation != self._generation:  # (left, or filtered since: read nothing)
            return
        counts, buckets, size = await read_in_background(
            all_tenants_aggregates, self.pages.reader, self.filter
        )
        if generation == self._generation:
            self.w.filter_bar.set_counts(sum(counts.values()), counts)
            self.w.histogram.set_data(buckets, size, filter_span(self.filter))

    def close(self) -> None:
        if self.pages is not None:
            self.pages.close()
            self.pages = None

    def shut_down(self) -> None:
        """The window is shutting down: its timers stop and nothing more is spawned. A timer left running fired in
        the last round of Qt events after the app's loop had stopped, and its task found no loop to run on."""
        self._shut = True
        for timer in (self._live, self._counts, self._tenants):
            timer.stop()
        self.close()

    # -- the rows ----------------------------------------------------------------------------------------------
    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        """The chosen row's event in the detail pane: read on a read thread as the tenant's table reads its rows
        (event_actions.py), from the row's store among the view's; dropped if the view is left, filtered again or
        its tenants change before it answers."""
        row = self.model.row_at(current.row()) if current.isValid() else None
        pages, generation = self.pages, self._generation
        if row is None or pages is None or row.tenant not in pages.reader.readers:
            self.w.events.clear_detail()
            self.timelines.show_names(None, None)
            return
        said = row.sentence.text if row.sentence is not None else row.event.summary
        source = DetailSource(
            TenantReader(pages.reader.readers[row.tenant]),
            lambda _ev: said,
            lambda: self.pages is pages and self._generation == generation and self.active and not self._shut,
            row.tenant,
        )
        self.w.events.read_detail(row.event, source)
        self.timelines.show_names(row.tenant, row.sentence)

    def _mention(self, index: QModelIndex, mention: Mention) -> None:
        row = self.model.row_at(index.row())
        if row is not None:
            self.timelines.open_mention(row.tenant, mention)

    def _menu(self, pos: QPoint) -> None:
        row = self.model.row_at(self.view.indexAt(pos).row())
        if row is not None:
            self.menu_for(row).popup(self.view.viewport().mapToGlobal(pos))

    def menu_for(self, row: AllTenantsRow) -> QMenu:
        menu = QMenu(self.view)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        menu.addAction(
            f"Show in {row.tenant}'s table", lambda: self.w.select_event(row.tenant, row.event.seq)
        )
        if row.sentence is not None:
            add_timeline_entries(menu, row.tenant, row.sentence, self.timelines.open_mention)
        return menu
