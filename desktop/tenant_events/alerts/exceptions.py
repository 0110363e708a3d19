"""An exception made from an alert ("Never for client HR Import"): the alert's group as the rule's `except`
entry, and the settings' rule entries with it added.

A grouped rule's alert names its group (compiled_rule.GroupKey): the value of its `group_by` field, or of the
fallback the event carried (`a|b`, stored as `1:value`). The exception tests that same field for that value, so
exactly the events that would have joined the group no longer fire the rule.
"""

from __future__ import annotations

from typing import Any

from tenant_events.alerts.compiled_rule import GROUP_MARK
from tenant_events.alerts.rule_model import Rule
from tenant_events.values.alerts import StoredAlert


def group_exception(rule: Rule, alert: StoredAlert) -> tuple[dict[str, Any], str] | None:
    """(the exception entry, its words "client HR Import") for the alert's group; None when the rule is not
    grouped by one field or the alert names no group."""
    if len(rule.group_by) != 1 or not alert.group_key or "\x1f" in alert.group_key:
        return None
    fallbacks = rule.group_by[0].split("|")
    index, value = 0, alert.group_key
    head, sep, rest = value.partition(":")
    if sep and head.isdigit() and 0 < int(head) < len(fallbacks):
        index, value = int(head), rest
    label = alert.rule_name.partition(GROUP_MARK)[2] or value
    condition = {"field": fallbacks[index], "op": "equals", "value": [value], "ignore_case": False}
    return {"conditions": [condition]}, label


def with_exception(
    entries: list[dict[str, Any]], rule: Rule, exception: dict[str, Any]
) -> list[dict[str, Any]]:
    """The settings' rule entries with `exception` added to `rule` (a built-in's entry made or changed; one's
    own rule's entry changed); the entries unchanged when the rule has it already."""
    if exception in [e.model_dump(mode="json", exclude_defaults=True) for e in rule.except_]:
        return entries
    have = [e.model_dump(mode="json", exclude_defaults=True) for e in rule.except_]
    out = [dict(e) for e in entries]
    entry = next((e for e in out if e.get("id") == rule.id), None)
    if entry is None:
        if rule.origin != "builtin":
            raise ValueError(f"the rule {rule.id!r} is not in the settings")
        entry = {"id": rule.id}
        out.append(entry)
    entry["except"] = [*have, exception]
    return out
