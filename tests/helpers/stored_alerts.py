"""A stored alert as the inbox, the notifier and the silences read it, for tests that need one without a store."""

from __future__ import annotations

import dataclasses
from typing import Any

from tenant_events.values.alerts import StoredAlert

_BASE = StoredAlert(
    id=1,
    rule_id="mass-deletion",
    rule_name="Mass deletion",
    severity="critical",
    tenant="acme",
    catch_up=False,
    notify=True,
    occurrences=1,
    event_count=1,
    first_seq=1,
    last_seq=1,
    first_event_id="evt_a",
    last_event_id="evt_b",
    first_time="2026-11-04T12:00:00.000Z",
    last_time="2026-11-04T12:00:30.000Z",
    last_time_ms=0,
    type_counts={"user.deleted": 1},
    detail="",
    raised_at=0.0,
    updated_at=0.0,
    read_at=None,
)


def stored_alert(**changes: Any) -> StoredAlert:
    """An unread critical "Mass deletion" alert of tenant acme, with `changes`."""
    return dataclasses.replace(_BASE, **changes)
