"""Selecting an event in the window: J/K steps, re-finding the shown event after a filter change, and opening
the window on one event (a clicked notification), clearing the filters that hide it."""

from __future__ import annotations

from typing import Protocol

from PySide6.QtWidgets import QTableView

from tenant_events.errors import StorageError
from tenant_events.ui.window.background_reads import read_in_background
from tenant_events.ui.window.detail_pane import DetailPane
from tenant_events.ui.window.feed_controller import FeedController, has_loop
from tenant_events.ui.window.filters.filter_bar import FilterBar
from tenant_events.ui.window.filters.histogram_zoom import HistogramZoom
from tenant_events.ui.window.table.event_table_model import EventTableModel
from tenant_events.ui.window.table.first_page import FirstPageReader
from tenant_events.ui.window.table.follow import FollowController
from tenant_events.values.events import StoredEvent
from tenant_events.view import page_cache


class SelectingWindow(Protocol):
    """What of the main window selecting an event uses (no import of it: it imports this module)."""

    detail: DetailPane
    model: EventTableModel
    table: QTableView
    follow: FollowController
    filter_bar: FilterBar
    zoom: HistogramZoom
    feed: FeedController
    first_page: FirstPageReader

    def bring_to_front(self) -> None: ...
    def show_tenant(self, name: str) -> None: ...
    def schedule_aggregates(self, now: bool = False) -> None: ...


def reselect_detail(w: SelectingWindow) -> None:
    """After a filter change: select the event the detail pane shows again, or clear the pane if it is gone.

    Where it sits is a count of its newer matches, over a year's archive 0.1-4 s: counted on a read thread with
    the page around it, the pane showing the event meanwhile and no row selected. A query still being read
    calls this again once its first page is shown."""
    shown = w.detail.shown
    if shown is None or w.first_page.busy:
        return
    if not has_loop():  # Qt events outside the asyncio loop (tests between loop runs): counted here
        _select_or_clear(w, w.model.row_of_seq(shown.seq))
        return
    w.feed.spawn(_reselect(w, shown))


async def _reselect(w: SelectingWindow, shown: StoredEvent) -> None:
    model, reader = w.model, w.feed.shown_worker_reader()
    generation, flt, head, rows = model.generation, model.event_filter, model.head, model.event_rows
    if reader is None or shown.seq > head:
        _select_or_clear(w, None)
        return
    try:
        found = await read_in_background(page_cache.find, reader, flt, head, shown.seq)
    except StorageError:  # the database being opened again: the pane keeps the event, no row selected
        return
    except Exception:
        if w.feed.shown_worker_reader() is not reader:
            return  # the tenant was removed (its reader closed) while this ran
        raise
    if w.detail.shown is None or w.detail.shown.seq != shown.seq or model.generation != generation:
        return  # another event shown, or another filter (which reselects itself)
    if model.head != head:  # rows arrived on top meanwhile: counted again for the new snapshot
        w.feed.spawn(_reselect(w, shown))
        return
    # only among the rows shown when the filter changed (its first page while the total is counted): a row
    # deeper would be scrolled to before its page keys are in, its neighbours' pages read on this thread
    _select_or_clear(w, model.place_found(found, shown.seq) if found[0] < rows else None)


def _select_or_clear(w: SelectingWindow, row: int | None) -> None:
    if row is None:
        w.detail.show_event(None)
    else:
        w.follow.select_quietly(row)


def select_event(w: SelectingWindow, tenant: str, seq: int) -> bool:
    w.bring_to_front()
    if tenant and tenant in w.feed.ui_readers:
        w.show_tenant(tenant)
    shown = w.feed.tenant
    if seq <= 0 or shown is None:
        return False
    ev = w.feed.ui_readers[shown].get(seq)
    if ev is None:
        return False
    pending = w.first_page.pending
    if pending is not None:  # a query's first page is read on a worker: the row is needed now, read it here
        w.first_page.cancel()
        if pending == w.model.event_filter:
            w.model.reload()
        else:
            w.model.set_filter(pending)
        w.schedule_aggregates(now=True)
    w.model.advance_head()
    row = w.model.row_of_seq(ev.seq)
    if row is None:
        bar = w.filter_bar
        bar.blockSignals(True)
        bar.clear_types()
        bar.search.clear()
        bar.range_box.setCurrentIndex(0)
        bar.test_box.setChecked(True)
        bar.blockSignals(False)
        w.zoom.stack.clear()
        w.model.set_filter(bar.current())  # counted now: the row number is needed at once
        w.schedule_aggregates(now=True)
        row = w.model.row_of_seq(ev.seq)
    if row is None:
        return False
    w.follow.select_quietly(row)
    return True


def step(w: SelectingWindow, delta: int) -> None:
    rows = w.model.rowCount()
    if rows == 0:
        return
    current = w.table.currentIndex().row()
    w.follow.select_quietly(min(max(0 if current < 0 else current + delta, 0), rows - 1))
