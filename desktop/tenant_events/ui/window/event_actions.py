"""What the window does with events beyond listing them: the detail pane's content (with an update's changes and
the dashboard link), copying, exporting. It is the host that row_menu.py and export_dialog.py talk to, so the
window itself only wires them (main_window.py stays a composition of parts).
"""

from __future__ import annotations

import asyncio
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


UNREAD = "The database is being opened again. Choose the row again in a moment to see its JSON."
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

    def show_detail(self, ev: StoredEvent | None) -> None:
        """The detail pane on `ev`. Its JSON and an update's earlier state are read on a read thread (over a
        year's archive 0.1-0.5 s, an update's earlier state up to a second more); meanwhile the pane shows the
        row's type and summary and says it is reading the event."""
        w, feed = self.w, self.w.feed
        self._request += 1
        reader = feed.shown_search_reader()
        if ev is None or reader is None:
            w.detail.show_event(None)
            return
        if not has_loop():  # Qt events outside the asyncio loop (tests between loop runs): read here
            self._show_full(*full_and_diff(feed.ui_readers[feed.tenant or ""], ev))
            return
        w.detail.show_reading(ev, w.model.names.text(ev))
        feed.spawn(self._read_detail(self._request, reader, ev))

    async def _read_detail(self, request: int, reader: TenantReader, ev: StoredEvent) -> None:
        try:
            full, diff = await read_in_background(full_and_diff, reader, ev)
        except StorageError:  # the database being opened again (a moment): the row is read when chosen again
            if request == self._request:
                self.w.detail.show_reading(ev, self.w.model.names.text(ev), UNREAD)
            return
        except Exception:
            if self.w.feed.shown_search_reader() is not reader:
                return  # the tenant was removed (its reader closed) while this ran
            raise
        if request == self._request:  # else another row was chosen meanwhile
            self._show_full(full, diff)

    def _show_full(self, full: StoredEvent, diff: tuple[UpdateDiff, str] | None) -> None:
        w = self.w
        named = w.model.names.text(full)  # the sentence with names once its page was described
        if diff is None:
            w.detail.show_event(full, self.dashboard_url_for(full), summary=named)
            return
        found, when = diff
        w.detail.show_event(
            full, self.dashboard_url_for(full), lambda dark: changes_html(found, when, dark), named
        )

    # -- RowMenuHost -----------------------------------------------------------------------------------------
    def full_event(self, seq: int) -> StoredEvent | None:
        feed = self.w.feed
        return feed.ui_readers[feed.tenant].get(seq) if feed.tenant in feed.ui_readers else None

    def dashboard_url_for(self, ev: StoredEvent) -> str | None:
        domain = self.domains.get(ev.tenant) or self.domains.get(self.w.feed.tenant or "")
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
