"""Showing an alert's events in the main window's table: its tenant, and the filter bar's alert chip (the query
term `alert:ID`), so the table holds exactly the events behind the alert however many there are; the query line,
the types and the time range are cleared so nothing else hides them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tenant_events.ui.alerts.alert_book import InboxEntry

if TYPE_CHECKING:
    from tenant_events.ui.window.main_window import MainWindow


def alert_filter_state(entry: InboxEntry) -> dict[str, object]:
    """The filter bar state (FilterBar.apply_state) that shows the events behind the alert."""
    a = entry.alert
    return {
        "types": [],
        "text": "",
        "range": 0,
        "test": True,
        "alert": {"id": a.id, "name": a.rule_name, "tenant": entry.profile},
    }


def show_alert_events(w: MainWindow, entry: InboxEntry) -> None:
    w.show_tenant(entry.profile)
    w.filter_bar.apply_state(alert_filter_state(entry))
    w.bring_to_front()
