"""What the "↑ N new alerts" pill counts while the inbox holds still: new alerts, and alerts that fired again and
would move for it — not an alert that fires again where it stands (the demo's "changes outside working hours",
already the latest, fires at every change: counting it kept the pill up for as long as the pointer rested)."""

from __future__ import annotations

from helpers.stored_alerts import stored_alert
from tenant_events.ui.alerts.alert_book import InboxEntry
from tenant_events.ui.alerts.inbox_model import InboxModel


def entry(alert_id: int, fired_at: float, occurrences: int = 1) -> InboxEntry:
    alert = stored_alert(
        id=alert_id,
        rule_id="off-hours",
        rule_name="Changes outside working hours",
        severity="info",
        fired_at=fired_at,
        occurrences=occurrences,
    )
    return InboxEntry("acme", alert)


def test_an_alert_firing_again_where_it_stands_waits_for_nothing(qapp):
    model = InboxModel()
    model.set_entries([entry(1, 300.0), entry(2, 200.0), entry(3, 100.0)])
    # the latest fires again (its count grows): repainted in its row, the latest still
    assert model.update_in_place([entry(1, 400.0, 2), entry(2, 200.0), entry(3, 100.0)]) == 0
    assert model.entries[0].alert.occurrences == 2
    # the last one fires again: it would move to the top, so it waits, and only it
    assert model.update_in_place([entry(1, 400.0, 2), entry(2, 200.0), entry(3, 500.0, 2)]) == 1
    # a new alert waits too; the rows have not moved
    assert (
        model.update_in_place([entry(1, 400.0, 2), entry(2, 200.0), entry(3, 500.0, 2), entry(4, 600.0)]) == 2
    )
    assert [e.alert.id for e in model.entries] == [1, 2, 3]
