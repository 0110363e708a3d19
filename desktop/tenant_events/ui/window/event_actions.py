"""What the window does with events beyond listing them: the detail pane's content (with an update's changes and
the dashboard link), copying, exporting. It is the host that row_menu.py and export_dialog.py talk to, so the
window itself only wires them (main_window.py stays a composition of parts).
"""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from tenant_events.ui.dialogs.export_dialog import ViewExport
from tenant_events.ui.window.detail_pane import DetailPane
from tenant_events.ui.window.feed_controller import FeedController
from tenant_events.ui.window.table.event_table_model import EventTableModel
from tenant_events.ui.window.toast import Toast
from tenant_events.ui.window.update_diff_view import changes_html, diff_for
from tenant_events.values.events import StoredEvent
from tenant_events.view import event_text
from tenant_events.view.dashboard import dashboard_url
from tenant_events.view.tenant_reader import TenantReader

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

    def show_detail(self, ev: StoredEvent | None) -> None:
        w, feed = self.w, self.w.feed
        if ev is None or feed.tenant not in feed.ui_readers:
            w.detail.show_event(None)
            return
        reader = feed.ui_readers[feed.tenant]
        full = reader.get(ev.seq) or ev
        diff = diff_for(reader, full)
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
