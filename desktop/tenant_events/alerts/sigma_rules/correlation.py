"""A Sigma correlation rule → one alert rule: event_count → a threshold, value_count → a distinct count,
temporal / temporal_ordered → a sequence (one step per detection rule), group-by → the rule's groups
(`group-by: [type]` → each event type counted on its own). Anything else is refused, naming the part."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from sigma.correlations import (
    SigmaCorrelationCondition,
    SigmaCorrelationConditionOperator,
    SigmaCorrelationRule,
    SigmaCorrelationType,
)

from tenant_events.alerts.rule_model import Condition
from tenant_events.alerts.rule_parts import MAX_WINDOW_S, RuleException
from tenant_events.alerts.sigma_rules.detection import Detection
from tenant_events.alerts.sigma_rules.entries import apply_extension, base_detection, common, extension_of
from tenant_events.alerts.sigma_rules.refusal import Refusal


def _threshold(cond: SigmaCorrelationCondition, rule_type: str) -> int:
    op = cond.op
    if cond.count != int(cond.count):
        raise Refusal("condition", f"{cond.count} is not a whole number of events")
    if op == SigmaCorrelationConditionOperator.GTE:
        count = int(cond.count)
    elif op == SigmaCorrelationConditionOperator.GT:
        count = int(cond.count) + 1
    else:
        raise Refusal(f"condition.{op.name.lower()}", f"a {rule_type} fires on 'at least': use gte (or gt)")
    return count


def _group(correlation: SigmaCorrelationRule) -> tuple[bool, list[str]]:
    """(per event type, the group keys under data) of the correlation's `group-by`."""
    per_type, keys = False, []
    for name in correlation.group_by or []:
        if name == "type":
            per_type = True
            continue
        if not name.startswith("data.") or len(name) == len("data."):
            raise Refusal(f"group-by {name}", "not an event field: use type or a dotted path under data")
        keys.append("|".join(part.strip().removeprefix("data.") for part in name.split("|")))
    if len(correlation.aliases):
        raise Refusal("aliases", "field aliases cannot be expressed: group by the same field in every rule")
    return per_type, keys


def _same(cond: dict[str, Any]) -> Any:
    """A condition in a form that compares equal however it was written (defaults left out or spelled)."""
    try:
        return Condition.model_validate(cond)
    except ValidationError:
        return repr(cond)


def _same_except(exception: Any) -> Any:
    """An exception in a form that compares equal however it was written."""
    try:
        return RuleException.model_validate(exception)
    except ValidationError:
        return repr(exception)


def _rule_conditions(correlation: SigmaCorrelationRule) -> list[Any]:
    """The rule-wide conditions a sequence's extension names (written into each step as well)."""
    extra = extension_of(correlation).get("conditions")
    return [_same(c) for c in extra if isinstance(c, dict)] if isinstance(extra, list) else []


def correlation_entry(correlation: SigmaCorrelationRule) -> dict[str, Any]:
    """The rule entry of a Sigma correlation rule over detection rules."""
    entry = common(correlation)
    kind = correlation.type
    if kind not in (
        SigmaCorrelationType.EVENT_COUNT,
        SigmaCorrelationType.VALUE_COUNT,
        SigmaCorrelationType.TEMPORAL,
        SigmaCorrelationType.TEMPORAL_ORDERED,
    ):
        raise Refusal(
            f"correlation type {kind.name.lower()}",
            "is not supported (supported: event_count, value_count, temporal, temporal_ordered)",
        )
    cond = correlation.condition
    if not isinstance(cond, SigmaCorrelationCondition):
        raise Refusal("condition", "an extended (boolean) correlation condition cannot be expressed")
    parts: list[Detection] = []
    sequence = kind in (SigmaCorrelationType.TEMPORAL, SigmaCorrelationType.TEMPORAL_ORDERED)
    for ref in correlation.referenced_rules:
        base = ref.rule
        if isinstance(base, SigmaCorrelationRule):
            raise Refusal(f"rules {ref.reference}", "a correlation of correlations cannot be expressed")
        try:
            parts.append(base_detection(base))
        except Refusal as exc:
            raise Refusal(exc.where, f"{exc} (in rule {base.title or ref.reference!r})") from None
        if sequence and parts[-1].any_of:
            raise Refusal(
                f"rules {ref.reference}",
                "an 'or' across fields in a step of a sequence cannot be "
                "expressed: make it a value list of one field, or one rule for each",
            )
    if not parts:
        raise Refusal("rules", "names no rule")
    seconds = correlation.timespan.seconds
    if seconds > MAX_WINDOW_S:
        raise Refusal(
            f"timespan {correlation.timespan.spec}",
            "is longer than a day, the longest window a rule "
            "keeps (for 'the first time in N days' use the novelty of a rule of your own)",
        )
    per_type, keys = _group(correlation)
    type_name = kind.name.lower()
    if sequence:
        if per_type:
            raise Refusal("group-by type", "a sequence of different events cannot be grouped by event type")
        if cond.op != SigmaCorrelationConditionOperator.GTE or cond.count != len(parts) or cond.fieldref:
            raise Refusal(
                "condition", f"a {type_name} correlation must see every one of its {len(parts)} rules"
            )
        if len(parts) < 2:
            raise Refusal("rules", f"a {type_name} correlation needs two rules or more")
        named = extension_of(correlation).get("except")
        if any(p.excepts for p in parts) and not (
            isinstance(named, list)
            and all(_same_except(e) in map(_same_except, named) for p in parts for e in p.excepts)
        ):
            raise Refusal(
                "rules",
                "a filter in a step of a sequence cannot be expressed: the rule's exceptions hold for "
                "every step (name them in the tenant_events attribute's except)",
            )
        shared = _rule_conditions(correlation)
        steps = [
            {"types": p.types, "conditions": [c for c in p.conditions if _same(c) not in shared]}
            for p in parts
        ]
        every = [t for p in parts for t in p.types]
        types = list(dict.fromkeys(every)) if "*" not in every else ["*"]
        entry.update(
            types=types,
            sequence={
                "steps": steps,
                "within_seconds": seconds,
                "ordered": kind == SigmaCorrelationType.TEMPORAL_ORDERED,
            },
        )
    else:
        first = parts[0]
        for other in parts[1:]:
            if (
                other.conditions != first.conditions
                or other.any_of != first.any_of
                or other.excepts != first.excepts
            ):
                raise Refusal(
                    "rules",
                    "counting over rules that differ in more than their event types cannot be expressed",
                )
        types = [t for t in dict.fromkeys(t for p in parts for t in p.types)]
        count = _threshold(cond, type_name)
        threshold: dict[str, Any] = {"count": count, "window_seconds": seconds, "per_type": per_type}
        if kind == SigmaCorrelationType.VALUE_COUNT:
            counted = cond.fieldref
            if not isinstance(counted, str) or not counted.startswith("data."):
                raise Refusal(
                    f"condition.field {counted}", "not an event field: use a dotted path under data"
                )
            threshold["distinct"] = counted.removeprefix("data.")
        elif count < 2:
            threshold = {}
        entry.update(types=types, conditions=first.conditions)
        if first.any_of:
            entry["any_of"] = first.any_of
        if first.excepts:
            entry["except"] = first.excepts
        if threshold:
            entry["threshold"] = threshold
    if keys:
        entry["group_by"] = keys
    return apply_extension(entry, extension_of(correlation))
