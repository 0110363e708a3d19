"""Alert rules → Sigma files that pySigma loads back to the same rules (reader.py).

    rule ──▶ detection rule: logsource auth0/events, `type` and one selection per condition, alternatives
             (`any_of`) as selections in one `(either1 or either2)`, exceptions as filters (`not filter1`)
         └─▶ threshold ──▶ event_count / value_count correlation (group-by, timespan) over it
         └─▶ sequence  ──▶ temporal / temporal_ordered correlation over one detection rule per step

Field names are the event's dotted JSON paths (`type`, `data.object.role.name`). What a rule holds that Sigma
has no words for (working hours, coalescing, on/off, fixtures, list and change tests, alternatives that include
one of those) goes into the custom
attribute `tenant_events`, which pySigma keeps and other Sigma tools ignore.
"""

from __future__ import annotations

import uuid
from typing import Any, Final

import yaml

from tenant_events.alerts.rule_model import Rule
from tenant_events.alerts.sigma_rules.entries import EXTENSION

NAMESPACE: Final = uuid.UUID("5f1e4c0e-7a61-4d1e-9c53-7e1a5e6d0a11")  # the rules' Sigma ids derive from it
_LEVELS: Final = {"info": "informational", "warning": "medium", "critical": "critical"}
_MODIFIER: Final = {
    "equals": "",
    "contains": "|contains",
    "starts_with": "|startswith",
    "ends_with": "|endswith",
    "regex": "|re",
    "cidr": "|cidr",
}
_UNITS: Final = (("d", 86_400), ("h", 3600), ("m", 60), ("s", 1))
# Rule fields kept in the extension when they differ from a new rule's defaults.
_EXTRA_FIELDS: Final = (
    "enabled",
    "notify",
    "coalesce_minutes",
    "time_of_day",
    "tenants",
    "include_test_events",
    "max_alerts_per_day",
    "novelty",
    "state",
    "tests",
)


class NotExpressible(ValueError):
    """A rule that cannot be written as Sigma (named with the part at fault)."""


def _escape(text: str) -> str:
    """A literal value in Sigma's wildcard syntax: `*`, `?` and `\\` escaped."""
    return text.replace("\\", "\\\\").replace("*", "\\*").replace("?", "\\?")


def _timespan(seconds: float) -> str:
    if seconds != int(seconds):
        raise NotExpressible(f"a window of {seconds:g} s is not whole seconds")
    for unit, size in _UNITS:
        if int(seconds) % size == 0:
            return f"{int(seconds) // size}{unit}"
    raise AssertionError("unreachable")


def _selection(cond: dict[str, Any]) -> tuple[dict[str, Any], bool] | None:
    """(selection map, negated) of a condition, or None when Sigma has no words for it."""
    op, field = cond["op"], "data." + cond["field"]
    negated = bool(cond.get("negate"))
    if op in ("exists", "missing"):
        return {f"{field}|exists": op == "exists"}, negated
    if op not in _MODIFIER:
        return None
    values = cond["value"] if isinstance(cond["value"], list) else [cond["value"]]
    key = field + _MODIFIER[op]
    if op == "regex" and cond.get("ignore_case", True):
        key += "|i"
    if op in ("regex", "cidr"):
        return {key: values if len(values) > 1 else values[0]}, negated
    if not cond.get("ignore_case", True):
        key += "|cased"
    shown = [_escape(v) for v in values]
    return {key: shown if len(shown) > 1 else shown[0]}, negated


def _alternatives_fit(any_of: list[dict[str, Any]]) -> bool:
    """Whether Sigma can say the alternatives so that they read back as they are (reader.py): an OR of two
    selections or more, each one field test, no two of them values of one field and modifier (those read back
    as one value list)."""
    if len(any_of) < 2:
        return False
    keys: set[tuple[str, str, bool]] = set()
    for cond in any_of:
        negated, value = bool(cond.get("negate")), cond.get("value")
        if _selection(cond) is None or (
            negated and (cond["op"] in ("exists", "missing") or (isinstance(value, list) and len(value) > 1))
        ):
            return False
        if not negated and cond["op"] not in ("exists", "missing"):
            key = (cond["field"], cond["op"], bool(cond.get("ignore_case", True)))
            if key in keys:
                return False
            keys.add(key)
    return True


def _filter(exception: dict[str, Any]) -> dict[str, Any] | None:
    """The selection map of an exception (a Sigma filter: every field test holds), or None when Sigma cannot
    say it as one map (a test it has no words for, a negated test, two tests on one field and modifier)."""
    selection: dict[str, Any] = {}
    for cond in exception["conditions"]:
        written = _selection(cond)
        if written is None or written[1] or any(key in selection for key in written[0]):
            return None
        selection |= written[0]
    return selection


def writable_excepts(excepts: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(the exceptions Sigma can say as filters, those kept in the extension)."""
    written = [e for e in excepts if _filter(e) is not None]
    return written, [e for e in excepts if _filter(e) is None]


def _detection(
    types: list[str],
    conditions: list[dict[str, Any]],
    any_of: list[dict[str, Any]] | None = None,
    excepts: list[dict[str, Any]] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The Sigma `detection` of types, conditions, alternatives (written only when they fit, see
    `_alternatives_fit`) and exceptions that fit (`writable_excepts`), and the conditions it could not hold."""
    detection: dict[str, Any] = {}
    terms: list[str] = []
    if types != ["*"]:
        detection["selection"] = {"type": types if len(types) > 1 else types[0]}
        terms.append("selection")
    leftover: list[dict[str, Any]] = []
    for cond in conditions:
        written = _selection(cond)
        if written is None:
            leftover.append(cond)
            continue
        name = f"test{sum(1 for k in detection if k.startswith('test')) + 1}"
        detection[name] = written[0]
        terms.append(f"not {name}" if written[1] else name)
    either: list[str] = []
    for i, cond in enumerate(any_of or [], 1):
        selection, negated = _selection(cond) or ({}, False)
        detection[f"either{i}"] = selection
        either.append(f"not either{i}" if negated else f"either{i}")
    if either:
        terms.append(f"({' or '.join(either)})")
    if not terms:
        detection["selection"] = {"type|exists": True}
        terms.append("selection")
    for i, exception in enumerate(excepts or [], 1):
        as_filter = _filter(exception)
        assert as_filter is not None  # (only writable ones are given)
        detection[f"filter{i}"] = as_filter
        terms.append(f"not filter{i}")
    detection["condition"] = " and ".join(terms)
    return detection, leftover


def _head(rule: Rule, name: str, title: str) -> dict[str, Any]:
    return (
        {
            "title": title,
            "id": str(uuid.uuid5(NAMESPACE, name)),
            "name": name,
            "status": "stable" if rule.origin == "builtin" else "experimental",
        }
        | ({"description": rule.explanation} if rule.explanation else {})
        | {"author": "Tenant Events"}
        | ({"tags": [f"attack.{t.lower()}" for t in rule.mitre]} if rule.mitre else {})
    )


def _extension(
    rule: Rule, leftover: list[dict[str, Any]], any_of: list[dict[str, Any]], excepts: list[dict[str, Any]]
) -> dict[str, Any]:
    new = Rule(id="x", name="x", types=["*"])
    out = {
        k: v
        for k in _EXTRA_FIELDS
        if (v := rule.model_dump(mode="json")[k]) != new.model_dump(mode="json")[k]
    }
    if leftover:
        out["conditions"] = leftover
    if any_of:
        out["any_of"] = any_of
    if excepts:
        out["except"] = excepts
    if any("|" in key for key in rule.group_by):
        out["group_by"] = list(rule.group_by)
    if rule.sequence is not None:
        every = [t for step in rule.sequence.steps for t in step.types]
        if list(dict.fromkeys(every)) != rule.types:
            out["types"] = list(rule.types)
    return out


def _group_by(rule: Rule, per_type: bool) -> list[str]:
    # a key with fallbacks (`a|b`) is grouped by its first field for other Sigma tools; the extension has all
    return (["type"] if per_type else []) + ["data." + key.split("|")[0] for key in rule.group_by]


def rule_documents(rule: Rule) -> list[dict[str, Any]]:
    """The Sigma documents of one rule: a detection rule, or detection rules then the correlation over them."""
    dumped = rule.model_dump(mode="json")
    conditions: list[dict[str, Any]] = dumped["conditions"]
    any_of: list[dict[str, Any]] = dumped["any_of"]
    # alternatives go into the detection when Sigma can say them (not a sequence's: its steps are its own)
    written = any_of if rule.sequence is None and _alternatives_fit(any_of) else []
    kept = [] if written else any_of
    filters, unwritten = writable_excepts(dumped["except"])
    level = _LEVELS[rule.severity]
    logsource = {"product": "auth0", "service": "events"}
    if rule.sequence is None and rule.threshold is None and not rule.group_by:
        detection, leftover = _detection(list(rule.types), conditions, written, filters)
        doc = _head(rule, rule.id, rule.name) | {
            "logsource": logsource,
            "detection": detection,
            "level": level,
        }
        extension = _extension(rule, leftover, kept, unwritten)
        return [doc | ({EXTENSION: extension} if extension else {})]
    bases: list[dict[str, Any]] = []
    leftover = []
    steps = (
        dumped["sequence"]["steps"]
        if rule.sequence is not None
        else [{"types": rule.types, "conditions": []}]
    )
    for i, step in enumerate(steps, 1):
        if rule.sequence is None:
            detection, leftover = _detection(list(step["types"]), conditions, written, filters)
        else:
            # the rule's own conditions hold for every step: written into each step for other Sigma tools,
            # and kept in the extension, which says they are the rule's (reader.py takes them out of the steps)
            own = [c for c in conditions if _selection(c) is not None]
            # so do its exceptions, kept whole in the extension as well (a step's filters are not the rule's)
            detection, left = _detection(list(step["types"]), [*own, *step["conditions"]], None, filters)
            if left:
                raise NotExpressible(f"sequence.steps.{i}: a {left[0]['op']} test cannot be written in Sigma")
            leftover = conditions
        suffix = f"step-{i}" if rule.sequence is not None else "events"
        base = _head(rule, f"{rule.id}-{suffix}"[:120], f"{rule.name} ({suffix.replace('-', ' ')})")
        bases.append(base | {"logsource": logsource, "detection": detection, "level": level})
    correlation: dict[str, Any] = {"rules": [b["name"] for b in bases]}
    if rule.sequence is not None:
        correlation["type"] = "temporal_ordered" if rule.sequence.ordered else "temporal"
        correlation["timespan"] = _timespan(rule.sequence.within_seconds)
        correlation["condition"] = {"gte": len(bases)}
        group = _group_by(rule, False)
    elif rule.threshold is not None:
        t = rule.threshold
        correlation["type"] = "value_count" if t.distinct else "event_count"
        correlation["timespan"] = _timespan(t.window_seconds)
        correlation["condition"] = {"gte": t.count} | ({"field": "data." + t.distinct} if t.distinct else {})
        group = _group_by(rule, t.per_type)
    else:  # grouped alerts without a count: one event is enough
        correlation |= {"type": "event_count", "timespan": "1s", "condition": {"gte": 1}}
        group = _group_by(rule, False)
    if group:
        correlation["group-by"] = group
    correlation["generate"] = False
    corr = _head(rule, rule.id, rule.name) | {"correlation": correlation, "level": level}
    sequence_excepts = dumped["except"] if rule.sequence is not None else unwritten
    extension = _extension(rule, leftover, kept, sequence_excepts)
    return [*bases, corr | ({EXTENSION: extension} if extension else {})]


def rule_yaml(rule: Rule) -> str:
    """One rule as a Sigma YAML file (several documents for a correlation)."""
    return yaml.safe_dump_all(rule_documents(rule), sort_keys=False, allow_unicode=True, width=110)
