"""A Sigma detection (pySigma's parsed condition tree) → the rule model's event types and field conditions.

    condition tree ──▶ negation pushed to the leaves ──▶ an AND of clauses ──▶ `type` clauses: event types
                                                                           ├─▶ value lists: one condition each
                                                                           └─▶ one OR across fields: `any_of`

A clause is one field test, an OR of tests on the same field with the same modifier (a value list), or an OR of
single tests on different fields (the rule's alternatives, `any_of`; a rule has one such list). A shape the
rule model cannot hold (an OR of AND groups, a second OR across fields, the event type as an alternative, a
keyword without a field) is refused with the field or modifier named, never approximated. Field names are the
event's dotted JSON paths: `type`, or a path under `data` (`data.object.role.name`).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import Any, Final

import re2
from sigma.conditions import (
    ConditionAND,
    ConditionFieldEqualsValueExpression,
    ConditionIdentifier,
    ConditionItem,
    ConditionNOT,
    ConditionOR,
    ConditionValueExpression,
)
from sigma.modifiers import reverse_modifier_mapping
from sigma.rule import SigmaDetection, SigmaDetectionItem, SigmaRule
from sigma.types import (
    SigmaBool,
    SigmaCasedString,
    SigmaCIDRExpression,
    SigmaExists,
    SigmaNull,
    SigmaNumber,
    SigmaRegularExpression,
    SigmaRegularExpressionFlag,
    SigmaString,
    SpecialChars,
)

from tenant_events.alerts.event_fields import check_carried
from tenant_events.alerts.rule_parts import re2_compile
from tenant_events.wire.event_types import EVENT_TYPE_NAMES

SUPPORTED_MODIFIERS: Final = (
    "contains",
    "startswith",
    "endswith",
    "re",
    "i",
    "ignorecase",
    "m",
    "multiline",
    "s",
    "dotall",
    "cidr",
    "exists",
    "all",
    "cased",
)
_SHOWN_MODIFIERS: Final = "contains, startswith, endswith, re, cidr, exists, all, cased"
_RE_FLAGS: Final = {
    SigmaRegularExpressionFlag.IGNORECASE: "i",
    SigmaRegularExpressionFlag.MULTILINE: "m",
    SigmaRegularExpressionFlag.DOTALL: "s",
}


class Refusal(ValueError):
    """What cannot be expressed, with the field (and modifier) it is about: `where` is e.g. `data.x|base64`."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}" if where else message)
        self.where = where


@dataclass(frozen=True, slots=True)
class Test:
    """One leaf: a field, the rule model's op and value, and whether it is negated."""

    field: str
    op: str
    value: str | None
    ignore_case: bool
    negated: bool
    where: str  # field|modifiers, as the Sigma file wrote it

    def key(self) -> tuple[str, str, bool, bool]:
        return (self.field, self.op, self.ignore_case, self.negated)


@dataclass(frozen=True, slots=True)
class Detection:
    """What one Sigma detection rule says in the rule model's terms."""

    types: list[str]
    conditions: list[dict[str, Any]]
    any_of: list[dict[str, Any]] = field(default_factory=list)
    excepts: list[dict[str, Any]] = field(default_factory=list)


def check_modifiers(rule: SigmaRule) -> None:
    """Refuse a modifier the rule model has no test for, naming field and modifier (before anything else)."""
    for detection in rule.detection.detections.values():
        for item in _items(detection):
            if item.field is None:
                shown = ", ".join(str(v) for v in item.original_value or item.value)
                raise Refusal(
                    "",
                    f"keyword search {shown!r} (a value without a field) cannot be expressed: "
                    "name the field, e.g. data.object.email",
                )
            for modifier in item.modifiers:
                name = reverse_modifier_mapping.get(modifier.__name__, modifier.__name__)
                if name not in SUPPORTED_MODIFIERS:
                    raise Refusal(
                        f"{item.field}|{name}",
                        f"the modifier {name} is not supported (supported: {_SHOWN_MODIFIERS})",
                    )


def _items(detection: SigmaDetection) -> list[SigmaDetectionItem]:
    out: list[SigmaDetectionItem] = []
    for item in detection.detection_items:
        out += _items(item) if isinstance(item, SigmaDetection) else [item]
    return out


def _where(expr: ConditionFieldEqualsValueExpression, spelled: dict[str, set[str]]) -> str:
    """The field as the file wrote it, modifiers included (`data.x|contains`), for the error line."""
    item = expr.parent
    if isinstance(item, SigmaDetectionItem) and item.modifiers:
        names = [reverse_modifier_mapping.get(m.__name__, m.__name__) for m in item.modifiers]
        return "|".join([expr.field, *names])
    ways = spelled.get(expr.field, set())
    return next(iter(ways)) if len(ways) == 1 else expr.field


def _spellings(rule: SigmaRule) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for detection in rule.detection.detections.values():
        for item in _items(detection):
            if item.field is not None:
                names = [reverse_modifier_mapping.get(m.__name__, m.__name__) for m in item.modifiers]
                out.setdefault(item.field, set()).add("|".join([item.field, *names]))
    return out


def _path(field: str) -> str:
    if field == "type":
        return field
    if not field.startswith("data.") or len(field) == len("data."):
        raise Refusal(
            field,
            "not an event field: use type or a dotted path under data "
            "(e.g. data.object.role.name, data.context.client.id)",
        )
    return field.removeprefix("data.")


def _string_test(value: SigmaString) -> tuple[str, str | None]:
    parts = list(value.s)
    lead = bool(parts) and parts[0] == SpecialChars.WILDCARD_MULTI
    trail = len(parts) > int(lead) and parts[-1] == SpecialChars.WILDCARD_MULTI
    core = parts[int(lead) : len(parts) - int(trail)]
    if not core:
        return ("exists", None) if lead else ("equals", "")
    if all(isinstance(p, str) for p in core):
        text = "".join(str(p) for p in core)
        op = {(True, True): "contains", (True, False): "ends_with", (False, True): "starts_with"}
        return op.get((lead, trail), "equals"), text
    # wildcards inside the value: the same match as an RE2 expression, anchored
    return "regex", "^" + value.to_regex().regexp.to_plain() + "$"


def leaf(expr: ConditionFieldEqualsValueExpression, negated: bool, spelled: dict[str, set[str]]) -> Test:
    """The rule model's test for one field expression."""
    where = _where(expr, spelled)
    field = _path(expr.field)
    value = expr.value
    ignore_case = True
    text: str | None
    if isinstance(value, SigmaExists):
        op, text, negated = ("missing" if value.exists == negated else "exists"), None, False
    elif isinstance(value, SigmaNull):
        op, text, negated = ("exists" if negated else "missing"), None, False
    elif isinstance(value, SigmaCIDRExpression):
        op, text = "cidr", str(value.network)
    elif isinstance(value, SigmaRegularExpression):
        pattern = value.regexp.to_plain()
        flags = "".join(sorted(_RE_FLAGS[f] for f in value.flags if f in _RE_FLAGS and _RE_FLAGS[f] != "i"))
        ignore_case = SigmaRegularExpressionFlag.IGNORECASE in value.flags
        op, text = "regex", (f"(?{flags})" if flags else "") + pattern
        try:
            re2_compile(text)  # (RE2 would log the pattern raw to stderr otherwise)
        except re2.error as exc:
            raise Refusal(where, f"regular expression {pattern!r} does not compile in RE2: {exc}") from None
    elif isinstance(value, SigmaString) and field == "type":
        op, text = "equals", _glob(value)  # event type patterns are globs: organization.*.role.deleted
    elif isinstance(value, SigmaString):
        op, text = _string_test(value)
        ignore_case = not isinstance(value, SigmaCasedString)
        if op == "exists" and negated:
            op, negated = "missing", False
        if op == "equals" and text == "":
            raise Refusal(where, "an empty value cannot be expressed (use |exists: false)")
    elif isinstance(value, SigmaBool):
        op, text = "equals", "true" if value.boolean else "false"
    elif isinstance(value, SigmaNumber):
        op, text = "equals", str(value.number)
    else:
        raise Refusal(where, f"a value of kind {type(value).__name__} cannot be expressed")
    if field == "type" and (op not in ("equals", "contains", "starts_with", "ends_with") or not ignore_case):
        raise Refusal(
            where, "type takes event type names (wildcards and contains/startswith/endswith allowed)"
        )
    return Test(field, op, text, ignore_case, negated, where)


Tree = tuple[str, list[Any]] | Test


def nnf(node: Any, spelled: dict[str, set[str]], negated: bool = False) -> Tree:
    """The condition tree with every `not` pushed down to a leaf (De Morgan)."""
    if isinstance(node, ConditionNOT):
        return nnf(node.args[0], spelled, not negated)
    if isinstance(node, ConditionAND | ConditionOR):
        if len(node.args) == 1:
            return nnf(node.args[0], spelled, negated)
        kind = "and" if isinstance(node, ConditionAND) != negated else "or"
        return (kind, [nnf(arg, spelled, negated) for arg in node.args])
    if isinstance(node, ConditionFieldEqualsValueExpression):
        return leaf(node, negated, spelled)
    if isinstance(node, ConditionValueExpression):
        raise Refusal("", f"keyword search {str(node.value)!r} (a value without a field) cannot be expressed")
    if isinstance(node, ConditionItem):
        raise Refusal("", f"condition part {type(node).__name__} cannot be expressed")
    raise Refusal("", "the detection has no condition")


def _flatten(tree: Tree, kind: str) -> list[Tree]:
    if isinstance(tree, tuple) and tree[0] == kind:
        return [x for sub in tree[1] for x in _flatten(sub, kind)]
    return [tree]


def _glob(value: SigmaString) -> str:
    glob = {SpecialChars.WILDCARD_MULTI: "*", SpecialChars.WILDCARD_SINGLE: "?"}
    out = ""
    for part in value.s:
        if isinstance(part, str):
            if any(c in part for c in "*?["):  # an escaped wildcard: no event type has one
                raise Refusal("type", f"{value.original!r} is not an event type name or pattern")
            out += part
        elif isinstance(part, SpecialChars) and part in glob:
            out += glob[part]
        else:
            raise Refusal("type", f"{value.original!r} is not an event type name or pattern")
    return out


def _type_patterns(tests: list[Test]) -> tuple[list[str], frozenset[str]]:
    """The event type patterns of a `type` clause and the event types they stand for."""
    patterns: list[str] = []
    names: set[str] = set()
    for t in tests:
        text = (t.value or "").lower()
        if t.op == "regex" or "[" in text:
            raise Refusal(t.where, f"{t.value!r} is not an event type name or pattern such as organization.*")
        pattern = {"contains": f"*{text}*", "starts_with": f"{text}*", "ends_with": f"*{text}"}.get(
            t.op, text
        )
        hits = {n for n in EVENT_TYPE_NAMES if fnmatch.fnmatchcase(n, pattern)}
        if not hits:
            raise Refusal(t.where, f"{t.value!r} matches no event type (e.g. user.deleted or organization.*)")
        if pattern not in patterns:
            patterns.append(pattern)
        names |= hits
    return patterns, frozenset(names)


def _first_where(tree: Tree) -> str:
    return tree.where if isinstance(tree, Test) else _first_where(tree[1][0])


def _clause(tree: Tree) -> list[Test]:
    """One AND-clause as its tests: one field test, or an OR of single field tests."""
    tests = _flatten(tree, "or")
    for t in tests:
        if not isinstance(t, Test):
            raise Refusal(
                _first_where(t),
                "an 'or' of 'and' groups cannot be expressed: a rule is one AND of "
                "field tests and one list of alternatives, each a single field test",
            )
    return [t for t in tests if isinstance(t, Test)]


def _is_value_list(leaves: list[Test]) -> bool:
    """Whether an OR of tests is one field with one modifier and several values (a condition's value list)."""
    first = leaves[0]
    if first.field == "type":
        return all(t.field == "type" for t in leaves) and (
            len(leaves) == 1 or not any(t.negated for t in leaves)
        )
    if len(leaves) > 1 and (first.negated or first.op in ("exists", "missing")):
        return False  # "not a or not b" is not "not (a or b)": alternatives, one test each
    return all(t.key() == first.key() for t in leaves[1:])


def _condition(tests: list[Test]) -> dict[str, Any]:
    """The rule model's condition for tests of one field and modifier (a value list when several)."""
    first = tests[0]
    values = [t.value for t in tests if t.value is not None]
    cond: dict[str, Any] = {"field": first.field, "op": first.op}
    if values:
        cond["value"] = values[0] if len(values) == 1 else values
    if first.op not in ("exists", "missing", "cidr"):
        cond["ignore_case"] = first.ignore_case
    if first.negated:
        cond["negate"] = True
    return cond


def _alternatives(leaves: list[Test]) -> list[dict[str, Any]]:
    """`any_of` for an OR across fields: the values of one field and modifier kept together as a value list."""
    groups: dict[tuple[str, str, bool, bool], list[Test]] = {}
    ordered: list[list[Test]] = []  # in the order written
    for t in leaves:
        if t.field == "type":
            other = next((x.where for x in leaves if x.field != "type"), None)
            if other is None:
                raise Refusal(t.where, "'not' in a list of event types cannot be expressed: name the types")
            raise Refusal(
                t.where,
                f"an 'or' between the event type and {other} cannot be expressed: write one rule for each",
            )
        if t.negated or t.op in ("exists", "missing"):
            ordered.append([t])  # never a value list: "not a or not b" is not "not (a or b)"
        elif t.key() in groups:
            groups[t.key()].append(t)
        else:
            groups[t.key()] = [t]
            ordered.append(groups[t.key()])
    return [_condition(tests) for tests in ordered]


def _filter_name(node: ConditionNOT) -> str | None:
    """The selection a `not` stands before when it is a filter's (`not filter_hr`), else None."""
    above: Any = node.args[0] if node.args else None
    while above is not None and above is not node:
        if isinstance(above, ConditionIdentifier):
            name = str(above.identifier)
            return name if name.startswith("filter") else None
        above = getattr(above, "parent", None)
    return None


def _exception(node: Any, spelled: dict[str, set[str]]) -> dict[str, Any]:
    """A filter's selection as a rule exception: one AND of field tests (a value list each)."""
    conditions: list[dict[str, Any]] = []
    for clause in _flatten(nnf(node, spelled), "and"):
        tests = _clause(clause)
        if not _is_value_list(tests) or tests[0].field == "type":
            raise Refusal(
                tests[0].where,
                "a filter is one AND of field tests under data (an 'or' across fields, or the event type, "
                "cannot be an exception)",
            )
        conditions.append(_condition(tests))
    return {"conditions": conditions}


def _split_filters(root: Any, spelled: dict[str, set[str]]) -> tuple[list[Any], list[dict[str, Any]]]:
    """(the condition's parts that select, the exceptions of its `and not filter…` parts)."""
    parts = list(root.args) if isinstance(root, ConditionAND) else [root]
    kept: list[Any] = []
    excepts: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, ConditionNOT) and _filter_name(part) is not None:
            excepts.append(_exception(part.args[0], spelled))
        else:
            kept.append(part)
    return kept, excepts


def translate(rule: SigmaRule) -> Detection:
    """The event types, conditions and exceptions (`and not filter…`) of `rule`'s detection (one condition
    line only)."""
    check_modifiers(rule)
    conditions = rule.detection.parsed_condition
    if len(conditions) != 1:
        raise Refusal("", "a detection with several conditions cannot be expressed: write one condition")
    spelled = _spellings(rule)
    kept, excepts = _split_filters(conditions[0].parse(), spelled)
    if not kept:
        raise Refusal("", "the condition holds only filters: name what the rule selects")
    tree: Tree = nnf(kept[0], spelled) if len(kept) == 1 else ("and", [nnf(k, spelled) for k in kept])
    types: frozenset[str] | None = None
    patterns: list[list[str]] = []
    out: list[dict[str, Any]] = []
    fields: list[Test] = []
    any_of: list[dict[str, Any]] | None = None
    for clause in _flatten(tree, "and"):
        tests = _clause(clause)
        first = tests[0]
        if not _is_value_list(tests):
            if any_of is not None:
                raise Refusal(
                    first.where,
                    "a second 'or' across fields cannot be expressed: a rule holds one list of alternatives",
                )
            any_of = _alternatives(tests)
            fields += tests
            continue
        if first.field == "type":
            written, names = _type_patterns(tests)
            patterns.append([] if first.negated else written)
            if first.negated:
                names = frozenset(EVENT_TYPE_NAMES) - names
            types = names if types is None else types & names
            if not types:
                raise Refusal(first.where, "no event type is left that the rule could match")
            continue
        out.append(_condition(tests))
        fields.append(first)
    for exception in excepts:
        fields += [
            Test(c["field"], c["op"], None, True, False, f"data.{c['field']}")
            for c in exception["conditions"]
        ]
    for test in fields:  # a field no event of these types carries is a typo, not a test that never holds
        try:
            check_carried(test.field, types if types is not None else EVENT_TYPE_NAMES)
        except ValueError as exc:
            raise Refusal(test.where, f"unknown field: {exc}") from None
    if types is None:
        return Detection(["*"], out, any_of or [], excepts)
    # one `type` list as written keeps its patterns (organization.*); several are narrowed to the names left
    return Detection(
        patterns[0] if len(patterns) == 1 and patterns[0] else sorted(types), out, any_of or [], excepts
    )
