"""What the window does with events beyond listing them: the detail pane's content (with an update's changes and
the dashboard link), copying, exporting. It is the host that row_menu.py and export_dialog.py talk to, so the
window itself only wires them (main_window.py stays a composition of parts).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from tenant_events.errors import StorageError
from tenant_events.ui.dialogs.export_dialog import ViewExport
from tenant_events.ui.window.background_reads import read_in_background
from tenant_events.ui.window.detail_pane import DetailPane
from tenant_events.ui.window.feed_controller import FeedController, has_loop
from tenant_events.ui.window.table.event_table_model import EventTableModel
from tenant_events.ui.window.toast import Toast
from tenant_events.ui.window.update_diff_view import changes_html, diff_for
from tenant_events.values.events import StoredEvent
from tenant_events.view import event_text
from tenant_events.view.dashboard import dashboard_url
from tenant_events.view.tenant_reader import TenantReader
from tenant_events.view.update_diff import UpdateDiff


def full_and_diff(reader: TenantReader, ev: StoredEvent) -> tuple[StoredEvent, tuple[UpdateDiff, str] | None]:
    """On a read thread: the event as stored (a page's rows leave the JSON out) and an update's changes."""
    full = reader.get(ev.seq) or ev
    return full, diff_for(reader, full)


@dataclass(frozen=True, slots=True)
class DetailSource:
    """Where a chosen row's event is read: the shown tenant's table, or a row of "All tenants" (its tenant's)."""

    reader: TenantReader  # read on a read thread
    summary: Callable[[StoredEvent], str]  # the row's sentence with names, for the pane's title
    current: Callable[[], bool]  # still the reader of the view shown: else the read's answer is dropped
    tenant: str | None = None  # the row's store's, when not the shown tenant's (its dashboard link)
    here: TenantReader | None = None  # the UI thread's, for Qt events outside the asyncio loop (tests)


UNREAD = "The database is being opened again. Choose the row again in a moment to see its JSON."
# a live row's JSON answers in a frame or two: "Reading the event…" only once its read takes longer
READING_AFTER_MS = 150
COPIED = {"json": "Copied the event as JSON", "jsonl": "Copied the event as a JSONL line"}


class ActionsWindow(Protocol):
    """What of the main window the actions use (no import of it: it imports this module)."""

    detail: DetailPane
    toast: Toast
    model: EventTableModel
    exporter: ViewExport
    feed: FeedController

    def show_tenant(self, name: str) -> None: ...


class EventActions:
    def __init__(self, window: ActionsWindow) -> None:
        self.w = window
        self.domains: dict[str, str] = {}  # tenant → its profile's domain, for dashboard links
        self._request = 0  # the newest row shown: an older row's read that ends later is not shown
        self._ahead: tuple[StoredEvent, tuple[UpdateDiff, str] | None] | None = None

    def select_read(
        self, full: StoredEvent, diff: tuple[UpdateDiff, str] | None, select: Callable[[], None]
    ) -> None:
        """Select the row of `full` with `select()`: the event was read with its place (event_selection.py), and
        the pane shows it as the row is chosen instead of reading it again."""
        self._ahead = (full, diff)
        try:
            select()
        finally:
            self._ahead = None

    def show_detail(self, ev: StoredEvent | None) -> None:
        """The detail pane on the shown tenant's row `ev` (read_detail), or on the event read with its place."""
        feed = self.w.feed
        ahead, self._ahead = self._ahead, None
        reader = feed.shown_search_reader()
        names = self.w.model.names.text  # the sentence with names once its page was described
        if ev is not None and ahead is not None and ahead[0].seq == ev.seq:
            self._request += 1
            self._show_full(*ahead, names)
            return
        source = None
        if reader is not None and feed.tenant is not None:
            here = feed.ui_readers.get(feed.tenant)
            source = DetailSource(reader, names, lambda: feed.shown_search_reader() is reader, here=here)
        self.read_detail(ev, source)

    def clear_detail(self) -> None:
        """The pane emptied, and a read of the event shown before still out dropped: its late answer must not show
        an event the filter now hides."""
        self.read_detail(None, None)

    def read_detail(self, ev: StoredEvent | None, source: DetailSource | None) -> None:
        """The detail pane on `ev`, a row of the tenant's table or of "All tenants" (`source` says whose). Its JSON
        and an update's earlier state are read on a read thread (over a year's archive 0.1-0.5 s, an update's
        earlier state up to a second more); meanwhile the pane shows the row's type and summary, and says it is
        reading the event once that has taken READING_AFTER_MS. An answer after another choice is dropped."""
        w = self.w
        self._request += 1
        if ev is None or source is None:
            w.detail.show_event(None)
            return
        if not has_loop():  # Qt events outside the asyncio loop (tests between loop runs): read here
            self._show_full(*full_and_diff(source.here or source.reader, ev), source.summary, source.tenant)
            return
        w.detail.show_reading(ev, source.summary(ev), after_ms=READING_AFTER_MS)
        w.feed.spawn(self._read_detail(self._request, source, ev))

    async def _read_detail(self, request: int, source: DetailSource, ev: StoredEvent) -> None:
        try:
            full, diff = await read_in_background(full_and_diff, source.reader, ev)
        except StorageError:  # the database being opened again (a moment): the row is read when chosen again
            if request == self._request and source.current():
                self.w.detail.show_reading(ev, source.summary(ev), UNREAD)
            return
        except Exception:
            if not source.current():
                return  # the tenant was removed or the view left (its reader closed) while this ran
            raise
        if request == self._request and source.current():  # else another row, view or tenant chosen meanwhile
            self._show_full(full, diff, source.summary, source.tenant)

    def _show_full(
        self,
        full: StoredEvent,
        diff: tuple[UpdateDiff, str] | None,
        summary: Callable[[StoredEvent], str],
        tenant: str | None = None,
    ) -> None:
        w, url, named = self.w, self.dashboard_url_for(full, tenant), summary(full)
        if diff is None:
            w.detail.show_event(full, url, summary=named)
            return
        found, when = diff
        w.detail.show_event(full, url, lambda dark: changes_html(found, when, dark), named)

    # -- RowMenuHost -----------------------------------------------------------------------------------------
    def read_full(self, ev: StoredEvent, answer: Callable[[StoredEvent], None]) -> None:
        """`answer(the event as stored)` for the row menu (a page's rows leave the JSON out): the one the pane shows
        when it is `ev`'s, else read on a read thread as the pane's (over a year's archive 0.1-0.5 s), `ev` itself
        when it cannot be read. No answer once another tenant is shown."""
        feed, shown = self.w.feed, self.w.detail.shown
        if shown is not None and shown.seq == ev.seq and shown.raw is not None:
            answer(shown)
            return
        reader = feed.shown_search_reader()
        if reader is None:
            answer(ev)
            return
        if not has_loop():  # Qt events outside the asyncio loop (tests between loop runs): read here
            here = feed.ui_readers.get(feed.tenant or "")
            answer((here or reader).get(ev.seq) or ev)
            return
        feed.spawn(self._read_full(reader, ev, answer))

    async def _read_full(
        self, reader: TenantReader, ev: StoredEvent, answer: Callable[[StoredEvent], None]
    ) -> None:
        try:
            full = await read_in_background(reader.get, ev.seq)
        except StorageError:  # the database being opened again (a moment): the row's own fields
            full = None
        except Exception:
            if self.w.feed.shown_search_reader() is not reader:
                return  # the tenant was removed or the view left (its reader closed) while this ran
            raise
        if self.w.feed.shown_search_reader() is reader:
            answer(full or ev)

    def dashboard_url_for(self, ev: StoredEvent, tenant: str | None = None) -> str | None:
        """`tenant`: the one whose store `ev` came from, when not the shown tenant ("All tenants")."""
        domains = self.domains
        domain = domains.get(tenant or "") or domains.get(ev.tenant) or domains.get(self.w.feed.tenant or "")
        return dashboard_url(domain, ev.type, event_text.data_of(ev.raw)) if domain else None

    def show_tenant(self, name: str) -> None:
        self.w.show_tenant(name)

    def confirm(self, text: str) -> None:
        self.w.toast.show_text(text)

    # -- menu commands ---------------------------------------------------------------------------------------
    def copy_event(self) -> None:
        self.w.detail.copy_json()

    def copy_event_jsonl(self) -> None:
        self.w.detail.copy_jsonl()

    def export_view(self) -> None:
        m = self.w.model
        self.w.exporter.ask(m.event_filter, m.head, m.event_rows)

    # -- ExportHost ------------------------------------------------------------------------------------------
    def export_source(self) -> tuple[str, TenantReader] | None:
        feed = self.w.feed
        reader = feed.shown_worker_reader()  # the export runs off the UI thread
        return (feed.tenant, reader) if reader is not None and feed.tenant else None

    def keep_task(self, task: asyncio.Task[Any]) -> None:
        self.w.feed.keep_task(task)
