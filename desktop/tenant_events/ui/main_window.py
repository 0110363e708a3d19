"""The main window: filter bar, activity histogram, the event table, the detail pane and the status bar.

It shows one tenant's store at a time (the tenant selector); every tenant keeps streaming in the background.
Heavy aggregates (counts per type, histogram) run on a worker thread with their own reader, throttled, so the
UI thread only runs indexed page reads (issue 7: a million events without a stutter).
"""

from __future__ import annotations

import asyncio
import ctypes
import json
import logging
import sys
import time
from typing import Any, Protocol

from PySide6.QtCore import QByteArray, QItemSelectionModel, QModelIndex, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QMainWindow,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from tenant_events.store.records import CursorState, EventFilter, StoredEvent, StoredGap, StoredRejected
from tenant_events.ui.detail_pane import DetailPane
from tenant_events.ui.event_table_model import Col, EventPages, EventTableModel, count_new
from tenant_events.ui.filter_bar import FilterBar
from tenant_events.ui.histogram import Histogram
from tenant_events.ui.icons import app_icon
from tenant_events.ui.rejected_dialog import RejectedDialog
from tenant_events.ui.status import TenantStatus, age_text

log = logging.getLogger(__name__)


class TenantData(EventPages, Protocol):
    def counts_by_type(self, flt: EventFilter) -> dict[str, int]: ...
    def histogram(self, flt: EventFilter, bucket_s: int) -> list[tuple[int, dict[str, int]]]: ...
    def rejected(self, limit: int = 500) -> list[StoredRejected]: ...
    def rejected_count(self) -> int: ...
    def gaps(self) -> list[StoredGap]: ...
    def cursor(self) -> CursorState: ...
    def first_after(self, seq: int | None) -> int | None: ...


HEAD_INTERVAL_MS = 200
AGGREGATE_MIN_MS = 1000
WIDTHS = {Col.TIME: 140, Col.TYPE: 205, Col.SUMMARY: 260, Col.TENANT: 80, Col.PURPOSE: 64, Col.ID: 150}


def release_freed_memory() -> None:
    """Hand freed heap back to the OS after big aggregate queries (glibc keeps it otherwise; RSS grows)."""
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


def _load_libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:
        return None


_LIBC = _load_libc()


def bucket_for(span_s: float) -> int:
    """A bucket size giving roughly 60–120 bars over `span_s`."""
    for size in (1, 5, 10, 30, 60, 300, 600, 1800, 3600, 3 * 3600, 6 * 3600, 86400):
        if span_s / size <= 120:
            return size
    return 7 * 86400


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
        self.unread = 0
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
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        header = self.table.horizontalHeader()
        header.setSectionsMovable(True)
        header.setStretchLastSection(False)
        for col, width in WIDTHS.items():
            self.table.setColumnWidth(col, width)
        header.setSectionResizeMode(Col.SUMMARY, QHeaderView.ResizeMode.Stretch)
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
        layout.addWidget(self.filter_bar)
        layout.addWidget(self.histogram)
        layout.addWidget(self.splitter, 1)
        self.setCentralWidget(central)

        self.state_label = QLabel("No tenant")
        self.state_label.setAccessibleName("Stream state")
        self.age_label = QLabel()
        self.rate_label = QLabel()
        self.gap_label = QLabel()
        self.rejected_button = QPushButton("0 rejected")
        self.rejected_button.setFlat(True)
        self.rejected_button.setToolTip("Messages the app rejected; click to list them")
        self.rejected_button.clicked.connect(self.show_rejected)
        bar = self.statusBar()
        bar.addWidget(self.state_label, 1)
        for w in (self.age_label, self.rate_label, self.gap_label, self.rejected_button):
            bar.addPermanentWidget(w)

        self._build_actions()
        self.filter_bar.filter_changed.connect(self.apply_filter)
        self.filter_bar.tenant_changed.connect(self.show_tenant)
        self.histogram.range_selected.connect(self.filter_bar.set_custom_range)
        self.table.selectionModel().currentRowChanged.connect(self._current_changed)
        self.model.rows_arrived.connect(self._rows_arrived)
        self.model.count_needed.connect(self._count_total)
        self.table.verticalScrollBar().valueChanged.connect(self._scrolled)
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
    def _build_actions(self) -> None:
        def add(
            text: str, keys: str | QKeySequence.StandardKey, slot: Any, checkable: bool = False
        ) -> QAction:
            action = QAction(text, self, checkable=checkable)
            action.setShortcut(QKeySequence(keys))
            action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            action.triggered.connect(slot)
            self.addAction(action)
            return action

        add("Search", QKeySequence.StandardKey.Find, self.filter_bar.focus_search)
        add("Next event", "J", lambda: self.step(1))
        add("Previous event", "K", lambda: self.step(-1))
        self.pause_action = add(
            "Pause stream", "Ctrl+P", lambda c: self.pause_toggled.emit(c), checkable=True
        )
        add("Settings", "Ctrl+,", self.settings_requested.emit)
        add("Quit", QKeySequence.StandardKey.Quit, self.quit_requested.emit)
        add("Copy event", "Ctrl+Shift+C", self.detail.copy_json)

    def _restore_layout(self) -> None:
        geometry = self._state.value("window/geometry")
        if isinstance(geometry, QByteArray) and not geometry.isEmpty():
            self.restoreGeometry(geometry)
        header_state = self._state.value("table/header")
        if isinstance(header_state, QByteArray) and not header_state.isEmpty():
            self.table.horizontalHeader().restoreState(header_state)
        splitter = self._state.value("window/splitter")
        if isinstance(splitter, QByteArray) and not splitter.isEmpty():
            self.splitter.restoreState(splitter)
        self.tray_hint_shown = self._state.value("window/tray_hint_shown") in (True, "true")

    def save_layout(self) -> None:
        self._state.setValue("window/geometry", self.saveGeometry())
        self._state.setValue("window/splitter", self.splitter.saveState())
        self._state.setValue("table/header", self.table.horizontalHeader().saveState())
        self._state.setValue("window/tray_hint_shown", self.tray_hint_shown)
        f = self.filter_bar
        self._state.setValue("filter/types", ",".join(sorted(f.selected_types())))
        self._state.setValue("filter/text", f.search.text())
        self._state.setValue("filter/range", f.range_box.currentIndex())
        self._state.setValue("filter/test", f.test_box.isChecked())
        self._state.setValue("filter/saved", json.dumps(f.saved))
        self._state.sync()

    def restore_filter(self) -> None:
        f = self.filter_bar
        types = str(self._state.value("filter/types") or "")
        f.blockSignals(True)
        f.set_types({t for t in types.split(",") if t})
        f.search.setText(str(self._state.value("filter/text") or ""))
        rng = self._state.value("filter/range")
        if rng is not None and str(rng).isdigit() and int(str(rng)) < f.range_box.count() - 1:
            f.range_box.setCurrentIndex(int(str(rng)))
        f.test_box.setChecked(self._state.value("filter/test") not in (False, "false"))
        try:
            saved = json.loads(str(self._state.value("filter/saved") or "{}"))
        except ValueError:
            saved = {}
        if isinstance(saved, dict):
            f.set_saved(saved)
        f.blockSignals(False)

    # -- tenants -----------------------------------------------------------------------------------------
    def add_tenant(self, name: str, data: TenantData, aggregates: TenantData | None = None) -> None:
        self._data[name] = data
        self._aggregate_data[name] = aggregates or data
        self.filter_bar.set_tenants(list(self._data), self.tenant or name)
        if self.tenant is None:
            self.show_tenant(name)

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

        head = self.model.head

        def work() -> tuple[
            dict[str, int], list[tuple[int, dict[str, int]]], int, int, list[tuple[int, str]], CursorState
        ]:
            counts = data.counts_by_type(flt)
            buckets = data.histogram(flt, 60)
            if buckets:
                span = buckets[-1][0] - buckets[0][0] + 60
                size = bucket_for(span)
                if size != 60:
                    buckets = data.histogram(flt, size)
            else:
                size = 60
            release_freed_memory()
            marks: list[tuple[int, str]] = []  # (matching events newer than the gap, reason): its row
            for gap in data.gaps():
                after = gap.after_seq or 0
                if after < head:
                    marks.append((data.count(flt, head, min_seq=after + 1), gap.reason))
            return counts, buckets, size, data.rejected_count(), marks, data.cursor()

        started = time.perf_counter()
        try:
            counts, buckets, size, rejected, gaps, _cursor = await asyncio.to_thread(work)
            # a pass over a big store costs CPU the engine also needs: keep them under ~20 % of the time
            took_ms = (time.perf_counter() - started) * 1000
            self._aggregate_timer.setInterval(max(AGGREGATE_MIN_MS, int(4 * took_ms)))
        except Exception:
            if self._aggregate_data.get(tenant) is not data:
                return  # the tenant was removed (its reader closed) while this ran
            raise
        if tenant != self.tenant or flt != self.model.event_filter:
            return  # the user moved on while this ran; a newer refresh is scheduled
        self.filter_bar.set_counts(sum(counts.values()), counts)
        self.histogram.set_data(buckets, size)
        self.rejected_button.setText(f"{rejected:,} rejected")
        if self.model.set_gaps(head, gaps):
            self.table.clearSpans()  # Qt moves spans with inserted/removed rows; reset only when gaps change
            for row in self.model.gap_rows():
                self.table.setSpan(row, Col.SUMMARY, 1, len(Col) - Col.SUMMARY)  # the reason, readable
        n = len(gaps)
        self.gap_label.setText(f"{n} possible gap{'s' if n != 1 else ''}" if n else "")
        self.gap_label.setToolTip(
            "Events may be missing where the table shows a possible-gap row (e.g. the cursor expired)"
            if n
            else ""
        )
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
        status = self._statuses.get(self.tenant or "")
        if status is None:
            self.state_label.setText("No tenant" if self.tenant is None else f"{self.tenant}: starting")
            return
        self.state_label.setText(status.line())
        self.age_label.setText(age_text(status.cursor_age_s))
        self.rate_label.setText(f"{status.events_per_s:.1f} events/s")

    # -- selection ---------------------------------------------------------------------------------------
    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        ev = self.model.event_at(current.row()) if current.isValid() else None
        self._show_detail(ev)

    def _show_detail(self, ev: StoredEvent | None) -> None:
        if ev is not None and self.tenant in self._data:
            full = self._data[self.tenant].get(ev.event_id)
            ev = full or ev
        self.detail.show_event(ev)

    def _reselect_detail(self) -> None:
        shown = self.detail.shown
        if shown is None:
            return
        row = self.model.row_of_seq(shown.seq)
        if row is None:
            self.detail.show_event(None)
        else:
            self._select_row(row)

    def _select_row(self, row: int) -> None:
        index = self.model.index(row, Col.TIME)
        self.table.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        )
        self.table.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)

    def select_event(self, tenant: str, event_id: str) -> bool:
        """Open the window on one event (a notification was clicked); clears filters that hide it."""
        self.bring_to_front()
        if tenant and tenant in self._data:
            self.show_tenant(tenant)
        if not event_id or self.tenant is None:
            return False
        ev = self._data[self.tenant].get(event_id)
        if ev is None:
            return False
        self.model.advance_head()
        row = self.model.row_of_seq(ev.seq)
        if row is None:
            self.filter_bar.blockSignals(True)
            self.filter_bar.clear_types()
            self.filter_bar.search.clear()
            self.filter_bar.range_box.setCurrentIndex(0)
            self.filter_bar.test_box.setChecked(True)
            self.filter_bar.blockSignals(False)
            self.model.set_filter(self.filter_bar.current())  # counted now: the row number is needed at once
            self.schedule_aggregates(now=True)
            row = self.model.row_of_seq(ev.seq)
        if row is None:
            return False
        self._select_row(row)
        return True

    def step(self, delta: int) -> None:
        rows = self.model.rowCount()
        if rows == 0:
            return
        current = self.table.currentIndex().row()
        self._select_row(min(max(0 if current < 0 else current + delta, 0), rows - 1))

    # -- unread and keeping the reader's row in place ---------------------------------------------------
    def _rows_arrived(self, n: int) -> None:
        bar = self.table.verticalScrollBar()
        reading = bar.value() > 0 or self.table.currentIndex().isValid()
        if bar.value() > 0:
            bar.setValue(bar.value() + n)  # ScrollPerItem: value counts rows; the row being read stays put
        if reading or not self.isVisible() or not self.isActiveWindow():
            self.unread += n
            self._unread_updated()

    def _scrolled(self, value: int) -> None:
        if value == 0 and self.unread and self.isVisible():
            self.mark_read()

    def mark_read(self) -> None:
        self.unread = 0
        self._unread_updated()

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

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self.table.verticalScrollBar().value() == 0 and not self.table.currentIndex().isValid():
            self.mark_read()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.save_layout()
        if self.keep_in_tray:
            event.ignore()
            self.hide()
            self.closed_to_tray.emit()
        else:
            event.accept()
            self.quit_requested.emit()
