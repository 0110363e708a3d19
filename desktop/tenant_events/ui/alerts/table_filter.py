"""Showing an alert's events in the main window's table: its tenant, its types, its time span and, when every
linked event is known and they are few, exactly their ids (`id:a OR id:b …` on the query line)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Final

from tenant_events.tenant.records import StoredEvent
from tenant_events.ui.alerts.alert_book import InboxEntry
from tenant_events.ui.window.filters.filter_bar import CUSTOM

if TYPE_CHECKING:
    from tenant_events.ui.window.main_window import MainWindow

MAX_ID_TERMS: Final = 200  # beyond this the filter is types + time span (the query line stays readable)


def _at(iso: str) -> datetime:
    return datetime.fromisoformat(iso.replace("Z", "+00:00"))


def alert_filter_state(entry: InboxEntry, events: list[StoredEvent]) -> dict[str, object]:
    """The filter bar state (FilterBar.apply_state) that shows the events behind the alert."""
    a = entry.alert
    exact = len(events) == a.event_count and len(events) <= MAX_ID_TERMS
    since = _at(a.first_time) - timedelta(seconds=1)
    until = _at(a.last_time) + timedelta(seconds=1)
    return {
        "types": sorted(a.type_counts),
        "text": " OR ".join(f"id:{e.event_id}" for e in events) if exact else "",
        "range": CUSTOM,
        "since": since.isoformat(),
        "until": until.isoformat(),
        "test": True,
    }


def show_alert_events(w: MainWindow, entry: InboxEntry, events: list[StoredEvent]) -> None:
    w.show_tenant(entry.profile)
    w.filter_bar.apply_state(alert_filter_state(entry, events))
    w.bring_to_front()
