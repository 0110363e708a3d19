"""Selecting an event in the window: J/K steps, re-finding the shown event after a filter change, and opening
the window on one event (a clicked notification), clearing the filters that hide it. Where an event sits is a
count of its newer matches, over a year's archive 0.1-4 s: both are read on a read thread, and the UI thread
only starts the read and shows its answer (if the user has not chosen something else meanwhile)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from PySide6.QtWidgets import QTableView

from tenant_events.errors import StorageError
from tenant_events.ui.window.background_reads import read_in_background
from tenant_events.ui.window.detail_pane import DetailPane
from tenant_events.ui.window.event_actions import EventActions
from tenant_events.ui.window.feed_controller import FeedController, has_loop
from tenant_events.ui.window.filters.filter_bar import FilterBar
from tenant_events.ui.window.filters.histogram_zoom import HistogramZoom
from tenant_events.ui.window.table.event_table_model import PAGE, EventTableModel
from tenant_events.ui.window.table.first_page import FirstPageReader, count_and_oldest
from tenant_events.ui.window.table.follow import FollowController
from tenant_events.ui.window.update_diff_view import diff_for
from tenant_events.values.events import EventFilter, StoredEvent
from tenant_events.view import page_cache
from tenant_events.view.tenant_reader import TenantReader
from tenant_events.view.update_diff import UpdateDiff


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
    events: EventActions
    open_request: int  # bumped by each event the window is asked to open on: an older one's read is dropped

    def bring_to_front(self) -> None: ...
    def show_tenant(self, name: str) -> None: ...
    def schedule_aggregates(self, now: bool = False) -> None: ...
    def isVisible(self) -> bool: ...


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
    model, reader, moves = w.model, w.feed.shown_worker_reader(), w.follow.user_moves
    generation, flt, head, rows = model.generation, model.event_filter, model.head, model.event_rows
    if reader is None or shown.seq > head:
        _select_or_clear(w, None)
        return
    try:
        found = await read_in_background(page_cache.find, reader, flt, head, shown.seq)
        # only among the rows shown when the filter changed (its first page while the total is counted): a row
        # deeper would be scrolled to before its page keys are in, its neighbours' pages read on this thread
        if found[1] is not None and found[0] < rows:
            found, head = await _moved_down(w, reader, flt, found, head, shown, generation)
        else:
            found = found[0], None
    except StorageError:  # the database being opened again: the pane keeps the event, no row selected
        return
    except Exception:
        if w.feed.shown_worker_reader() is not reader:
            return  # the tenant was removed (its reader closed) while this ran
        raise
    if _changed(w, shown, generation):
        return  # another event shown, or another filter (which reselects itself, a query once its rows are in)
    if found[1] is None:  # it no longer matches, or sits deeper than the rows shown
        _select_or_clear(w, None)
    elif model.head == head:  # else rows kept arriving faster than its page was read: the pane keeps it
        # selected; scrolled to only if the user has not moved the view meanwhile (over a year: seconds)
        _select_or_clear(w, model.place_found(found, shown.seq), scroll=w.follow.user_moves == moves)


MOVED_READS = 5


async def _moved_down(
    w: SelectingWindow,
    reader: TenantReader,
    flt: EventFilter,
    found: page_cache.Found,
    head: int,
    shown: StoredEvent,
    generation: int,
) -> tuple[page_cache.Found, int]:
    """Rows that arrived on top during the count moved the event down by as many rows: its place is known without
    counting again (seconds over a year, longer than a busy tenant's next batch takes to come), and only the page
    around it is read again (milliseconds), a few times at most while rows keep arriving."""
    for _ in range(MOVED_READS):
        added = w.model.added_since(head)
        if added is None or w.model.head == head or _changed(w, shown, generation):
            break
        row, head = found[0] + added, w.model.head
        found = row, await read_in_background(page_cache.page_around, reader, flt, head, row, shown.seq)
    return found, head


def _changed(w: SelectingWindow, shown: StoredEvent, generation: int) -> bool:
    """A query still being read is a newer filter too: the rows shown keep their generation until it is in."""
    pane = w.detail.shown
    return pane is None or pane.seq != shown.seq or w.model.generation != generation or w.first_page.busy


def _select_or_clear(w: SelectingWindow, row: int | None, scroll: bool = True) -> None:
    if row is None:
        w.events.clear_detail()
    else:
        w.follow.select_quietly(row, scroll)


@dataclass(frozen=True, slots=True)
class Opened:
    """An event to open the window on and the snapshot it is shown in, read on a read thread (`open_at`)."""

    full: StoredEvent
    diff: tuple[UpdateDiff, str] | None
    flt: EventFilter  # the filter bar's, or the bar cleared when that hid it
    head: int
    first: list[StoredEvent]  # its first page
    counted: tuple[int, int]  # its total and oldest match
    found: page_cache.Found


def open_at(reader: TenantReader, seq: int, filters: tuple[EventFilter, ...]) -> Opened | None:
    """On a read thread: event `seq`, and the first of `filters` that shows it (the bar's, then the bar cleared)
    with its page, its total and the page around the event. Over a year's archive the event takes 0.1-0.5 s to
    read, and the counts more (a cold filter, seconds): never on the UI thread."""
    ev = reader.get(seq)
    if ev is None:
        return None
    head = reader.head_seq()
    for flt in dict.fromkeys(filters):
        at = reader.older(flt, seq + 1, 1)  # whether `flt` shows it, before counting where
        if not at or at[0].seq != seq:
            continue
        found = page_cache.find(reader, flt, head, seq)
        first = reader.page(flt, head, 0, PAGE)
        return Opened(ev, diff_for(reader, ev), flt, head, first, count_and_oldest(reader, flt, head), found)
    return None


@dataclass(frozen=True, slots=True)
class Asked:
    """What the window showed when it was asked to open on an event: any of it changed by the user meanwhile
    (a row chosen, a filter, a tenant) and the read's answer is dropped, not shown over their choice."""

    request: int
    tenant: str
    row: int | None  # the event of the row selected (the same one selected again after a query's page: kept)
    flt: EventFilter  # the filter bar's at `now`
    now: datetime


def select_event(w: SelectingWindow, tenant: str, seq: int) -> asyncio.Task[None] | None:
    """Open the window on event `seq` of `tenant` (a notification clicked, "Show in the table"), clearing the
    filters that hide it. The window comes to the front and shows the tenant at once; the event, the filter
    that shows it and its place there are read on a read thread, then its row is selected in one step. Returns
    the read's task (None when there is nothing to read, or no loop: then read here)."""
    w.bring_to_front()
    if tenant and tenant in w.feed.ui_readers:
        w.show_tenant(tenant)
    w.open_request += 1
    shown, reader = w.feed.tenant, w.feed.shown_search_reader()
    if seq <= 0 or shown is None or reader is None:
        return None
    now = datetime.now(UTC)
    asked = Asked(w.open_request, shown, _selected_seq(w), w.filter_bar.current(now), now)
    filters = (asked.flt, w.filter_bar.cleared())
    if not has_loop():  # Qt events outside the asyncio loop (tests between loop runs): read here
        _open(w, asked, open_at(w.feed.ui_readers[shown], seq, filters))
        return None
    return w.feed.spawn(_read_and_open(w, asked, reader, seq, filters))


async def _read_and_open(
    w: SelectingWindow, asked: Asked, reader: TenantReader, seq: int, filters: tuple[EventFilter, ...]
) -> None:
    try:
        opened = await read_in_background(open_at, reader, seq, filters)
    except StorageError:  # the database being opened again: the window stays as it is
        return
    except Exception:
        if w.feed.shown_search_reader() is not reader:
            return  # the tenant was removed (its reader closed) while this ran
        raise
    _open(w, asked, opened)


def _open(w: SelectingWindow, asked: Asked, opened: Opened | None) -> None:
    """Show `opened`'s snapshot with its row selected, if the user is still where they asked from."""
    still = (
        w.open_request == asked.request
        and w.feed.tenant == asked.tenant
        and _selected_seq(w) in (None, asked.row)
        and w.filter_bar.current(asked.now) == asked.flt
        and w.isVisible()
    )
    if opened is None or not still:
        return
    if opened.flt != asked.flt:
        w.filter_bar.clear_quietly()
        w.zoom.stack.clear()
    w.first_page.cancel()  # a page still read for the filter shown before is not shown over this one
    w.model.show_first_page(opened.flt, opened.head, opened.first, opened.counted)
    w.schedule_aggregates(now=True)
    row = w.model.place_found(opened.found, opened.full.seq)
    if row is not None:
        w.events.select_read(opened.full, opened.diff, lambda: w.follow.select_quietly(row))


def _selected_seq(w: SelectingWindow) -> int | None:
    index = w.table.currentIndex()
    ev = w.model.event_at(index.row()) if index.isValid() else None
    return None if ev is None else ev.seq


def step(w: SelectingWindow, delta: int) -> None:
    rows = w.model.rowCount()
    if rows == 0:
        return
    current = w.table.currentIndex().row()
    w.follow.select_quietly(min(max(0 if current < 0 else current + delta, 0), rows - 1))
