"""Selecting an event in the window: J/K steps, re-finding the shown event after a filter change, and opening
the window on one event (a clicked notification), clearing the filters that hide it."""

from __future__ import annotations

from typing import Protocol

from PySide6.QtWidgets import QTableView

from tenant_events.ui.window.detail_pane import DetailPane
from tenant_events.ui.window.feed_controller import FeedController
from tenant_events.ui.window.filters.filter_bar import FilterBar
from tenant_events.ui.window.filters.histogram_zoom import HistogramZoom
from tenant_events.ui.window.table.event_table_model import EventTableModel
from tenant_events.ui.window.table.first_page import FirstPageReader
from tenant_events.ui.window.table.follow import FollowController


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
    """After a filter change: select the event the detail pane shows again, or clear the pane if it is gone."""
    shown = w.detail.shown
    if shown is None:
        return
    row = w.model.row_of_seq(shown.seq)
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
