"""The opt-in per-type notifications as what they now are: the built-in "Events of chosen types" rule.

The Settings tree of event types and the tray's per-type menu keep `notifications.event_types`; these write the
same choice into that rule's entry in `alerts.rules` (its other changes kept), so the rules engine does the
notifying (and coalescing) and the old per-type policy never fires.
"""

from __future__ import annotations

from typing import Any, Final

from tenant_events.alert_settings import AlertSettings
from tenant_events.alerts.builtin_rules import CHOSEN_TYPES
from tenant_events.alerts.from_settings import rule_set

RULE_ID: Final = CHOSEN_TYPES.id


def per_type_on(alerts: AlertSettings) -> bool:
    rule = rule_set(alerts).get(RULE_ID)
    return rule is not None and rule.enabled


def chosen_types(alerts: AlertSettings) -> set[str]:
    """The types that notify one by one now: the rule's when it is on, none when it is off (the tray's ticks)."""
    rule = rule_set(alerts).get(RULE_ID)
    return set(rule.event_types) if rule is not None and rule.enabled else set()


def with_per_type(
    alerts: AlertSettings, *, enabled: bool | None = None, types: list[str] | None = None
) -> None:
    """Change the rule's entry in place: switched on/off and/or its types (an empty choice keeps its types)."""
    entries: list[dict[str, Any]] = alerts.rules
    entry = next((e for e in entries if isinstance(e, dict) and e.get("id") == RULE_ID), None)
    if entry is None:
        entry = {"id": RULE_ID}
        entries.append(entry)
    if enabled is not None:
        entry["enabled"] = enabled
    if types:
        entry["types"] = sorted(types)
