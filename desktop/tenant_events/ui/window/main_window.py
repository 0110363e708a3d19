"""The main window: filter bar, activity histogram, the event table, the detail pane and the status bar.

It shows one tenant's store at a time (the tenant selector); every tenant keeps streaming in the background.
Heavy aggregates (counts per type, histogram) run on a worker thread with their own reader, throttled, so the
UI thread only runs indexed page reads (issue 7: a million events without a stutter).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from PySide6.QtCore import QModelIndex, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QMainWindow,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from tenant_events.tenant.records import EventFilter
from tenant_events.ui.dialogs.export_dialog import ViewExport
from tenant_events.ui.dialogs.rejected_dialog import RejectedDialog
from tenant_events.ui.look.icons import app_icon
from tenant_events.ui.window import window_state
from tenant_events.ui.window.banners import BannerArea
from tenant_events.ui.window.detail_pane import DetailPane
from tenant_events.ui.window.event_actions import COPIED, EventActions
from tenant_events.ui.window.filters.filter_bar import FilterBar
from tenant_events.ui.window.filters.histogram import Histogram
from tenant_events.ui.window.filters.histogram_zoom import HistogramZoom
from tenant_events.ui.window.filters.saved_filters import SavedFilters
from tenant_events.ui.window.status_line import StatusLine
from tenant_events.ui.window.table import event_selection
from tenant_events.ui.window.table.columns import ColumnLayout
from tenant_events.ui.window.table.event_table_model import PAGE, Col, EventTableModel, count_new
from tenant_events.ui.window.table.follow import FollowController
from tenant_events.ui.window.table.keyboard_nav import KeyboardNav
from tenant_events.ui.window.table.row_menu import RowMenu
from tenant_events.ui.window.toast import Toast
from tenant_events.ui.window.window_menus import build_menus
from tenant_events.view import aggregates
from tenant_events.view.aggregates import TenantData
from tenant_events.view.tenant_status import TenantStatus
from tenant_events.view.time_range import filter_span

log = logging.getLogger(__name__)


HEAD_INTERVAL_MS = 200
AGGREGATE_MIN_MS = 1000
STACK_BELOW_PX = 1100  # narrower windows put the detail pane under the table, so the columns keep their width


class MainWindow(QMainWindow):
    pause_toggled = Signal(bool)
    quit_requested = Signal()
    settings_requested = Signal()
    closed_to_tray = Signal()
    tenant_shown = Signal(str)
    unread_changed = Signal(int)
    aggregates_updated = Signal()

    def __init__(self, state_file: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Tenant Events")
        self.setWindowIcon(app_icon())
        self.resize(1280, 780)
        self.keep_in_tray = False
        self.tray_hint_shown = False
        self._state = QSettings(state_file, QSettings.Format.IniFormat)
        self._data: dict[str, TenantData] = {}
        self._aggregate_data: dict[str, TenantData] = {}
        self._statuses: dict[str, TenantStatus] = {}
        self.tenant: str | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

        self.filter_bar = FilterBar()
        self.histogram = Histogram()
        self.model = EventTableModel()
        self.table = QTableView()
        self.table.setModel(self.model)
        self.model.modelReset.connect(self.table.clearSpans)  # gap rows (and their spans) go with a reload
        self.table.setAccessibleName("Events")
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerItem)  # follow.py counts rows
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.columns = ColumnLayout(self.table, self.model, self._state)
        self.detail = DetailPane()
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.table)
        self.splitter.addWidget(self.detail)
        self.splitter.setStretchFactor(0, 2)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([900, 380])
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(8, 8, 8, 4)
        self.banners = BannerArea()  # lasting notices: sign-ins not remembered, the last run died
        layout.addWidget(self.banners)
        layout.addWidget(self.filter_bar)
        layout.addWidget(self.histogram)
        layout.addWidget(self.splitter, 1)
        self.setCentralWidget(central)

        self.status_line = StatusLine(self.statusBar())
        line = self.status_line
        self.state_label, self.gap_label, self.rejected_button = (
            line.state_label,
            line.gap_label,
            line.rejected_button,
        )
        self.rejected_button.clicked.connect(self.show_rejected)

        self.toast = Toast(self.splitter)
        self.events = EventActions(self)
        self.follow = FollowController(self.table, self.model, self)
        self.follow.unseen_changed.connect(lambda _n: self._unread_updated())
        self.row_menu = RowMenu(self.table, self.model, self.filter_bar, self.events)
        self.zoom = HistogramZoom(self.histogram, self.filter_bar, self)
        self.saved_filters = SavedFilters(self.filter_bar, self)
        self.exporter = ViewExport(self, self.events)
        self.menu_actions = build_menus(self)
        self.keyboard = KeyboardNav(self)
        self.pause_action = self.menu_actions.pause
        self.detail.copied.connect(lambda how: self.events.confirm(COPIED[how]))
        self.filter_bar.filter_changed.connect(self.apply_filter)
        self.filter_bar.tenant_changed.connect(self.show_tenant)
        self.table.selectionModel().currentRowChanged.connect(self._current_changed)
        self.model.count_needed.connect(self._count_total)
        self._advance_task: asyncio.Future[None] | None = None
        self._head_timer = QTimer(self)
        self._head_timer.setSingleShot(True)
        self._head_timer.setInterval(HEAD_INTERVAL_MS)
        self._head_timer.timeout.connect(self._advance_head)
        self._aggregate_timer = QTimer(self)
        self._aggregate_timer.setSingleShot(True)
        self._aggregate_timer.setInterval(AGGREGATE_MIN_MS)
        self._aggregate_timer.timeout.connect(self.refresh_aggregates)
        self._restore_layout()

    # -- setup -------------------------------------------------------------------------------------------
    def _restore_layout(self) -> None:
        window_state.restore_layout(self, self._state)

    def save_layout(self) -> None:
        window_state.save_layout(self, self._state)

    def restore_filter(self) -> None:
        window_state.restore_filter(self, self._state)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        narrow = event.size().width() < STACK_BELOW_PX
        wanted = Qt.Orientation.Vertical if narrow else Qt.Orientation.Horizontal
        if self.splitter.orientation() != wanted:
            self.splitter.setOrientation(wanted)
            self.splitter.setSizes([600, 300] if narrow else [900, 380])

    # -- tenants -----------------------------------------------------------------------------------------
    def add_tenant(self, name: str, data: TenantData, aggregates: TenantData | None = None) -> None:
        self._data[name] = data
        self._aggregate_data[name] = aggregates or data
        self.filter_bar.set_tenants(list(self._data), self.tenant or name)
        self.columns.set_tenant_count(len(self._data))
        if self.tenant is None:
            self.show_tenant(name)

    def set_tenant_domain(self, name: str, domain: str) -> None:
        """The profile's domain, for "Open in dashboard" (view/dashboard.py decides if it has one)."""
        self.events.domains[name] = domain

    def remove_tenant(self, name: str) -> None:
        self._data.pop(name, None)
        self._aggregate_data.pop(name, None)
        self._statuses.pop(name, None)
        if self.tenant == name:
            self.tenant = None
            self.model.set_store(None)
            rest = list(self._data)
            if rest:
                self.show_tenant(rest[0])
        self.filter_bar.set_tenants(list(self._data), self.tenant)
        self.columns.set_tenant_count(len(self._data))

    def show_tenant(self, name: str) -> None:
        if name not in self._data or name == self.tenant:
            return
        self.tenant = name
        self.filter_bar.set_tenants(list(self._data), name)
        self.model.set_store(self._data[name], self.filter_bar.current())
        self.detail.show_event(None)
        self._show_status()
        self.schedule_aggregates(now=True)
        self.tenant_shown.emit(name)

    # -- data flow ---------------------------------------------------------------------------------------
    def apply_filter_now(self, flt: EventFilter) -> None:
        """Show `flt` as the filter bar would (first page now, the total counted on a worker thread, then the
        aggregates: both use the same reader, and the row count matters more)."""
        self.model.set_filter(flt, count_later=self._has_loop())
        if not self.model.counting:
            self.schedule_aggregates(now=True)

    def apply_filter(self) -> None:
        self.apply_filter_now(self.filter_bar.current())
        self._reselect_detail()

    def events_stored(self, tenant: str, first_seq: int = 0, last_seq: int = 0, inserted: int = -1) -> None:
        """The engine committed a batch for `tenant`: new rows within HEAD_INTERVAL_MS, aggregates later.

        Commits can come 10-40 times a second while catching up; the table moves at most ~5 times a second.
        """
        if tenant == self.tenant and not self._head_timer.isActive():
            self._head_timer.start()

    def _advance_head(self) -> None:
        if self.model.counting or (self._advance_task is not None and not self._advance_task.done()):
            self._head_timer.start()  # one count at a time; try again shortly
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return
        self._advance_task = asyncio.ensure_future(self._advance())
        self._tasks.add(self._advance_task)
        self._advance_task.add_done_callback(self._tasks.discard)

    @staticmethod
    def _has_loop() -> bool:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return False
        return True

    def _count_total(self, generation: int) -> None:
        task = asyncio.ensure_future(self._count(generation))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _count(self, generation: int) -> None:
        data = self._aggregate_data.get(self.tenant or "")
        if data is None:
            return
        flt, head = self.model.event_filter, self.model.head
        total = await asyncio.to_thread(data.count, flt, head)
        self.model.apply_total(generation, total)
        self.schedule_aggregates(now=True)

    async def _advance(self) -> None:
        """Count the new rows on a worker thread (its own reader), then insert them on the UI thread."""
        model, tenant = self.model, self.tenant
        data = self._aggregate_data.get(tenant or "")
        if data is None:
            return
        gen, flt, head, rows = model.generation, model.event_filter, model.head, model.event_rows

        def work() -> tuple[int, int]:
            new_head = data.head_seq()
            if new_head <= head:
                return head, 0
            return new_head, count_new(data, flt, head, rows, new_head)

        new_head, added = await asyncio.to_thread(work)
        current = model.generation == gen and model.head == head and self.tenant == tenant
        if current and model.apply_advance(new_head, added):
            self.schedule_aggregates()

    def schedule_aggregates(self, now: bool = False) -> None:
        if now:
            self._aggregate_timer.start(0)
        elif not self._aggregate_timer.isActive():
            self._aggregate_timer.start()

    def refresh_aggregates(self) -> None:
        if self.tenant is None:
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # Qt events processed outside the asyncio loop (tests between loop runs)
            return
        task = asyncio.ensure_future(self._aggregates(self.tenant, self.model.event_filter))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def shutdown(self) -> None:
        """Stop background aggregate queries before the app closes the readers."""
        self._aggregate_timer.stop()
        self._head_timer.stop()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _aggregates(self, tenant: str, flt: EventFilter) -> None:
        data = self._aggregate_data.get(tenant)
        if data is None:
            return

        head, generation = self.model.head, self.model.generation
        every = 0 if self.model.has_anchors else PAGE
        started = time.perf_counter()
        try:
            agg = await asyncio.to_thread(aggregates.compute, data, flt, head, every)
            # a pass over a big store costs CPU the engine also needs: keep them under ~20 % of the time
            took_ms = (time.perf_counter() - started) * 1000
            self._aggregate_timer.setInterval(max(AGGREGATE_MIN_MS, int(4 * took_ms)))
        except Exception:
            if self._aggregate_data.get(tenant) is not data:
                return  # the tenant was removed (its reader closed) while this ran
            raise
        if tenant != self.tenant or flt != self.model.event_filter:
            return  # the user moved on while this ran; a newer refresh is scheduled
        self.filter_bar.set_counts(sum(agg.counts.values()), agg.counts)
        self.histogram.set_data(agg.buckets, agg.bucket_s, filter_span(flt))
        self.columns.set_has_purpose(agg.has_purpose)
        if agg.anchors is not None:
            self.model.set_anchors(generation, head, agg.anchors)
        if self.model.set_gaps(head, agg.gaps):
            self.table.clearSpans()  # Qt moves spans with inserted/removed rows; reset only when gaps change
            for row in self.model.gap_rows():
                self.table.setSpan(row, Col.SUMMARY, 1, len(Col) - Col.SUMMARY)  # the reason, readable
        self.status_line.show_counts(agg.rejected, len(agg.gaps))
        self.aggregates_updated.emit()

    def set_status(self, status: TenantStatus) -> None:
        self._statuses[status.tenant] = status
        if status.tenant == self.tenant:
            self._show_status()

    def set_paused(self, paused: bool) -> None:
        self.pause_action.blockSignals(True)
        self.pause_action.setChecked(paused)
        self.pause_action.blockSignals(False)

    def _show_status(self) -> None:
        self.status_line.show(self.tenant, self._statuses.get(self.tenant or ""))

    # -- selection ---------------------------------------------------------------------------------------
    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        ev = self.model.event_at(current.row()) if current.isValid() else None
        self.events.show_detail(ev)

    def _reselect_detail(self) -> None:
        event_selection.reselect_detail(self)

    def select_event(self, tenant: str, seq: int) -> bool:
        """Open the window on one event (a notification was clicked); clears filters that hide it."""
        return event_selection.select_event(self, tenant, seq)

    def step(self, delta: int) -> None:
        event_selection.step(self, delta)

    # -- unread: rows not yet on screen (follow.py) -----------------------------------------------------
    @property
    def unread(self) -> int:
        return self.follow.count

    def _unread_updated(self) -> None:
        self.setWindowTitle(f"Tenant Events ({self.unread:,} new)" if self.unread else "Tenant Events")
        self.unread_changed.emit(self.unread)

    def show_rejected(self) -> None:
        if self.tenant is None:
            return
        dialog = RejectedDialog(self.tenant, self._data[self.tenant].rejected(), self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()

    # -- window --------------------------------------------------------------------------------------------
    def bring_to_front(self) -> None:
        self.showNormal()
        self.raise_()
        self.activateWindow()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.save_layout()
        if self.keep_in_tray:
            event.ignore()
            self.hide()
            self.closed_to_tray.emit()
        else:
            event.accept()
            self.quit_requested.emit()
