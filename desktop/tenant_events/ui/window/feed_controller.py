"""What follows the tenants into the window: which tenant is shown, its new rows after each commit, the total
after a filter change, and the aggregates (counts per type, histogram, gaps, rejected) behind the table.

Heavy aggregates run on a worker thread with their own reader, throttled, and a tenant's first page is read on
a worker too when it is shown, so the UI thread only runs indexed page reads while scrolling (a year of
events without a stutter). The window owns the widgets; this owns the timing.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from typing import Any, Protocol, TypeVar

from PySide6.QtCore import QObject, QTimer, SignalInstance
from PySide6.QtWidgets import QTableView, QWidget

from tenant_events.errors import StorageError
from tenant_events.ui.task_set import TaskSet
from tenant_events.ui.window.background_reads import read_in_background
from tenant_events.ui.window.filters.filter_bar import FilterBar
from tenant_events.ui.window.filters.histogram import Histogram
from tenant_events.ui.window.status_line import StatusLine
from tenant_events.ui.window.table.columns import ColumnLayout
from tenant_events.ui.window.table.event_table_model import PAGE, Col, EventTableModel
from tenant_events.ui.window.table.first_page import FirstPageReader, count_and_oldest
from tenant_events.values.events import EventFilter
from tenant_events.view import aggregates
from tenant_events.view.tenant_reader import TenantReader
from tenant_events.view.tenant_status import TenantStatus
from tenant_events.view.time_range import filter_span

T = TypeVar("T")

HEAD_INTERVAL_MS = 200
AGGREGATE_MIN_MS = 1000


class FeedWindow(Protocol):
    """What of the main window the feed fills (no import of it: it imports this module)."""

    filter_bar: FilterBar
    histogram: Histogram
    model: EventTableModel
    table: QTableView
    columns: ColumnLayout
    status_line: StatusLine
    first_page: FirstPageReader

    @property
    def tenant_shown(self) -> SignalInstance: ...
    @property
    def aggregates_updated(self) -> SignalInstance: ...
    def window(self) -> QWidget: ...


def has_loop() -> bool:
    """Whether an asyncio loop runs (Qt events can be processed outside it: tests between loop runs)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class FeedController(QObject):
    def __init__(self, w: FeedWindow) -> None:
        super().__init__(w.window())
        self.w = w
        self.ui_readers: dict[str, TenantReader] = {}  # tenant → its UI-thread reader
        self.worker_readers: dict[str, TenantReader] = {}  # tenant → its reader for worker threads
        # tenant → its reader for first pages (a tenant shown, a query)
        self.search_readers: dict[str, TenantReader] = {}
        self.statuses: dict[str, TenantStatus] = {}
        self.tenant: str | None = None
        self.tasks = TaskSet()
        self._advance_task: asyncio.Future[None] | None = None
        self._stopped = False  # shutdown() began: a commit or a timer that comes after starts no new work
        self._head_timer = QTimer(self)
        self._head_timer.setSingleShot(True)
        self._head_timer.setInterval(HEAD_INTERVAL_MS)
        self._head_timer.timeout.connect(self._advance_head)
        self._aggregate_timer = QTimer(self)
        self._aggregate_timer.setSingleShot(True)
        self._aggregate_timer.setInterval(AGGREGATE_MIN_MS)
        self._aggregate_timer.timeout.connect(self.refresh_aggregates)
        w.model.count_needed.connect(self._count_needed)

    def shown_worker_reader(self) -> TenantReader | None:
        return self.worker_readers.get(self.tenant or "")

    def shown_search_reader(self) -> TenantReader | None:
        """The reader of first pages (a tenant shown, a query): its own, so it never waits behind an aggregates
        pass."""
        return self.search_readers.get(self.tenant or "")

    # -- tenants -----------------------------------------------------------------------------------------
    def add_tenant(
        self,
        name: str,
        ui_reader: TenantReader,
        worker_reader: TenantReader | None = None,
        search_reader: TenantReader | None = None,
    ) -> None:
        self.ui_readers[name] = ui_reader
        self.worker_readers[name] = worker_reader or ui_reader
        self.search_readers[name] = search_reader or worker_reader or ui_reader
        self.w.filter_bar.set_tenants(list(self.ui_readers), self.tenant or name)
        self.w.columns.set_tenant_count(len(self.ui_readers))
        if self.tenant is None:
            self.show_tenant(name)

    def remove_tenant(self, name: str) -> None:
        self.ui_readers.pop(name, None)
        self.worker_readers.pop(name, None)
        self.search_readers.pop(name, None)
        self.statuses.pop(name, None)
        if self.tenant == name:
            self.w.first_page.cancel()  # its reader is being closed: a page still being read is not shown
            self.tenant = None
            self.w.model.set_reader(None)
            rest = list(self.ui_readers)
            if rest:
                self.show_tenant(rest[0])
        self.w.filter_bar.set_tenants(list(self.ui_readers), self.tenant)
        self.w.columns.set_tenant_count(len(self.ui_readers))

    def show_tenant(self, name: str) -> None:
        if name not in self.ui_readers or name == self.tenant:
            return
        w = self.w
        self.tenant = name
        w.filter_bar.set_tenants(list(self.ui_readers), name)
        flt = w.filter_bar.current()
        # the first page on a worker too, query or not: a year's newest rows come through DuckDB and SQLite,
        # and its total is counted there, not in the few ms the UI thread may take
        later = has_loop()
        w.model.set_reader(self.ui_readers[name], flt, read=not later)
        self._show_status()
        if not later and not w.model.counting:
            self.schedule_aggregates(now=True)  # else once counted (_count) or the first page is shown
        w.tenant_shown.emit(name)  # drops a read still pending for the store shown before
        if later and not w.first_page.start(flt):
            w.model.reload()

    def set_status(self, status: TenantStatus) -> None:
        self.statuses[status.tenant] = status
        if status.tenant == self.tenant:
            self._show_status()

    def _show_status(self) -> None:
        self.w.status_line.show(self.tenant, self.statuses.get(self.tenant or ""))

    # -- data flow ---------------------------------------------------------------------------------------
    def apply_filter_now(self, flt: EventFilter) -> None:
        """Show `flt` as the filter bar would (first page now, the total counted on a worker thread, then the
        aggregates: both use the same reader, and the row count matters more)."""
        if self.w.first_page.take(flt, has_loop()):
            return  # a query may scan the whole store: read on a worker, applied when it is done
        self.w.model.set_filter(flt, count_later=has_loop())
        if not self.w.model.counting:
            self.schedule_aggregates(now=True)

    def events_stored(self, tenant: str) -> None:
        """The engine committed a batch for `tenant`: new rows within HEAD_INTERVAL_MS, aggregates later.

        Commits can come 10-40 times a second while catching up; the table moves at most ~5 times a second.
        """
        if tenant == self.tenant and not self._head_timer.isActive() and not self._stopped:
            self._head_timer.start()

    def _advance_head(self) -> None:
        task = self._advance_task
        if self._stopped:
            return
        if self.w.model.counting or self.w.first_page.busy or (task is not None and not task.done()):
            self._head_timer.start()  # one count at a time; try again shortly
            return
        if not has_loop():
            return
        self._advance_task = self.spawn(self._advance())

    def spawn(self, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        return self.tasks.keep(asyncio.create_task(coro))  # create_task: no loop running raises here

    def keep_task(self, task: asyncio.Task[Any]) -> None:
        """Hold `task` until it is done; shutdown() cancels what is still running."""
        self.tasks.keep(task)

    def _count_needed(self, generation: int) -> None:
        """A first page shown (a worker's, applied in a task step Qt may run after the loop ended): count it."""
        if not self._stopped and has_loop():
            self.spawn(self._count(generation))

    async def _count(self, generation: int) -> None:
        reader = self.shown_worker_reader()
        if reader is None:
            return
        model = self.w.model
        flt, head = model.event_filter, model.head
        try:
            total, oldest = await read_in_background(count_and_oldest, reader, flt, head)
        except StorageError:  # the database being opened again: counted once it is open
            QTimer.singleShot(AGGREGATE_MIN_MS, lambda: self._count_again(generation))
            return
        model.apply_total(generation, total, oldest)
        self.schedule_aggregates(now=True)

    def _count_again(self, generation: int) -> None:
        if not self._stopped and has_loop() and self.w.model.generation == generation:
            self.spawn(self._count(generation))

    async def _advance(self) -> None:
        """Count the new rows on a worker thread (its own reader), then insert them on the UI thread."""
        model, tenant = self.w.model, self.tenant
        reader = self.shown_worker_reader()
        if reader is None:
            return
        gen, flt, head, rows = model.generation, model.event_filter, model.head, model.event_rows

        def work() -> tuple[int, int]:
            new_head = reader.head_seq()
            if new_head <= head:
                return head, 0
            return new_head, reader.count_new(flt, head, rows, new_head)

        try:
            new_head, added = await read_in_background(work)
        except StorageError:  # the database being opened again: the rows shown stay, tried again shortly
            self._head_timer.start()
            return
        current = model.generation == gen and model.head == head and self.tenant == tenant
        if current and model.apply_advance(new_head, added):
            self.schedule_aggregates()

    def schedule_aggregates(self, now: bool = False) -> None:
        if self._stopped:
            return
        if now:
            self._aggregate_timer.start(0)
        elif not self._aggregate_timer.isActive():
            self._aggregate_timer.start()

    def refresh_aggregates(self) -> None:
        if self.tenant is None or self._stopped:
            return
        if not has_loop():  # Qt events processed outside the asyncio loop (tests between loop runs)
            return
        self.spawn(self._aggregates(self.tenant, self.w.model.event_filter))

    async def shutdown(self) -> None:
        """Stop background aggregate queries before the app closes the readers."""
        self._stopped = (
            True  # (a commit during the cancel below restarted the head timer: a task left at quit)
        )
        self._aggregate_timer.stop()
        self._head_timer.stop()
        await self.w.first_page.stop()
        await self.tasks.cancel()

    async def _aggregates(self, tenant: str, flt: EventFilter) -> None:
        reader = self.worker_readers.get(tenant)
        if reader is None or not _loop_running():
            return  # no tenant, or a refresh that came due as the app's loop ended (quit): nothing to show
        w, model = self.w, self.w.model
        head, generation = model.head, model.generation
        every = 0 if model.has_anchors else PAGE
        started = time.perf_counter()
        # the counts and histogram first, shown as soon as they are read; the page keys after them (over a
        # 30M-event year they are most of the pass: a scan that numbers every match, 3.4 of ~4.2 s of CPU)
        agg = await self._read_aggregates(tenant, reader, aggregates.compute, reader, flt, head)
        if agg is None or not self._still_shown(tenant, flt):
            return  # failed, or the user moved on while this ran; a newer refresh is scheduled
        w.filter_bar.set_counts(sum(agg.counts.values()), agg.counts)
        w.histogram.set_data(agg.buckets, agg.bucket_s, filter_span(flt))
        w.columns.set_has_purpose(agg.has_purpose)
        if model.set_gaps(head, agg.gaps):
            w.table.clearSpans()  # Qt moves spans with inserted/removed rows; reset only when gaps change
            for row in model.gap_rows():
                w.table.setSpan(row, Col.SUMMARY, 1, len(Col) - Col.SUMMARY)  # the reason, readable
        w.status_line.show_counts(agg.rejected, len(agg.gaps))
        if every:
            anchors = await self._read_aggregates(tenant, reader, reader.anchors, flt, head, every)
            if anchors is None or not self._still_shown(tenant, flt):
                return
            model.set_anchors(generation, head, anchors)
        # a pass over a big store costs CPU the engine also needs: keep them under ~20 % of the time
        took_ms = (time.perf_counter() - started) * 1000
        self._aggregate_timer.setInterval(max(AGGREGATE_MIN_MS, int(4 * took_ms)))
        w.aggregates_updated.emit()

    async def _read_aggregates(
        self, tenant: str, reader: TenantReader, fn: Callable[..., T], *args: Any
    ) -> T | None:
        """`fn(*args)` on a read thread; None when it could not answer (the database being opened again: tried
        again shortly, what is shown stays meanwhile; or the tenant removed, its reader closed, while it ran)."""
        try:
            return await read_in_background(fn, *args)
        except StorageError:
            if self.worker_readers.get(tenant) is reader:  # (else the tenant was removed while this ran)
                self._aggregate_timer.start(AGGREGATE_MIN_MS)
            return None
        except Exception:
            if self.worker_readers.get(tenant) is not reader:
                return None
            raise

    def _still_shown(self, tenant: str, flt: EventFilter) -> bool:
        """Whether an aggregates read of `tenant` and `flt` is still the window's to show."""
        return tenant == self.tenant and flt == self.w.model.event_filter and not self.w.first_page.busy


def _loop_running() -> bool:
    """Whether an asyncio loop runs this step: Qt's loop may still step a task after the asyncio loop ended."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
