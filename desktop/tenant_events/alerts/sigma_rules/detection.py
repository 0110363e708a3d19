"""A Sigma detection (pySigma's parsed condition tree) → the rule model's event types and field conditions.

    condition tree ──▶ negation pushed to the leaves ──▶ an AND of clauses ──▶ `type` clauses: event types
                                                                           └─▶ other clauses: one condition each

A clause is one field test, or an OR of tests on the same field with the same modifier (a value list). A
shape the rule model cannot hold (an OR across fields, `not` around a value list of another kind, a keyword
without a field) is refused with the field or modifier named, never approximated. Field names are the event's
dotted JSON paths: `type`, or a path under `data` (`data.object.role.name`).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Any, Final

import re2
from sigma.conditions import (
    ConditionAND,
    ConditionFieldEqualsValueExpression,
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
from tenant_events.wire.event_types import EVENT_TYPE_NAMES

SUPPORTED_MODIFIERS: Final = (
    "contains", "startswith", "endswith", "re", "i", "ignorecase", "m", "multiline", "s", "dotall", "cidr",
    "exists", "all", "cased",
)  # fmt: skip
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


def check_modifiers(rule: SigmaRule) -> None:
    """Refuse a modifier the rule model has no test for, naming field and modifier (before anything else)."""
    for detection in rule.detection.detections.values():
        for item in _items(detection):
            if item.field is None:
                shown = ", ".join(str(v) for v in item.original_value or item.value)
                raise Refusal("", f"keyword search {shown!r} (a value without a field) cannot be expressed: "
                              "name the field, e.g. data.object.email")  # fmt: skip
            for modifier in item.modifiers:
                name = reverse_modifier_mapping.get(modifier.__name__, modifier.__name__)
                if name not in SUPPORTED_MODIFIERS:
                    raise Refusal(f"{item.field}|{name}", f"the modifier {name} is not supported "
                                  f"(supported: {_SHOWN_MODIFIERS})")  # fmt: skip


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
        raise Refusal(field, "not an event field: use type or a dotted path under data "
                      "(e.g. data.object.role.name, data.context.client.id)")  # fmt: skip
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
            re2.compile(text)
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


def _clause(tree: Tree) -> list[Test]:
    """One AND-clause as its tests, which must all be one field and modifier (a value list)."""
    tests = [t for t in _flatten(tree, "or")]
    if not all(isinstance(t, Test) for t in tests):
        raise Refusal("", "an 'or' of 'and' groups cannot be expressed: a rule is one AND of field tests, each "
                      "with a list of values")  # fmt: skip
    leaves = [t for t in tests if isinstance(t, Test)]
    first = leaves[0]
    for t in leaves[1:]:
        if t.key() != first.key() and not (
            t.field == first.field == "type" and not t.negated and not first.negated
        ):
            raise Refusal(t.where, f"an 'or' between {first.where} and {t.where} cannot be expressed: a value "
                          "list must be one field with one modifier")  # fmt: skip
    if len(leaves) > 1 and (first.negated or first.op in ("exists", "missing")):
        raise Refusal(first.where, "'not' around a list of alternatives cannot be expressed")
    return leaves


def translate(rule: SigmaRule) -> Detection:
    """The event types and conditions of `rule`'s detection (one condition line only)."""
    check_modifiers(rule)
    conditions = rule.detection.parsed_condition
    if len(conditions) != 1:
        raise Refusal("", "a detection with several conditions cannot be expressed: write one condition")
    tree = nnf(conditions[0].parse(), _spellings(rule))
    types: frozenset[str] | None = None
    patterns: list[list[str]] = []
    out: list[dict[str, Any]] = []
    fields: list[Test] = []
    for clause in _flatten(tree, "and"):
        tests = _clause(clause)
        first = tests[0]
        if first.field == "type":
            written, names = _type_patterns(tests)
            patterns.append([] if first.negated else written)
            if first.negated:
                names = frozenset(EVENT_TYPE_NAMES) - names
            types = names if types is None else types & names
            if not types:
                raise Refusal(first.where, "no event type is left that the rule could match")
            continue
        values = [t.value for t in tests if t.value is not None]
        cond: dict[str, Any] = {"field": first.field, "op": first.op}
        if values:
            cond["value"] = values[0] if len(values) == 1 else values
        if first.op not in ("exists", "missing", "cidr"):
            cond["ignore_case"] = first.ignore_case
        if first.negated:
            cond["negate"] = True
        out.append(cond)
        fields.append(first)
    for test in fields:  # a field no event of these types carries is a typo, not a test that never holds
        try:
            check_carried(test.field, types if types is not None else EVENT_TYPE_NAMES)
        except ValueError as exc:
            raise Refusal(test.where, f"unknown field: {exc}") from None
    if types is None:
        return Detection(["*"], out)
    # one `type` list as written keeps its patterns (organization.*); several are narrowed to the names left
    return Detection(patterns[0] if len(patterns) == 1 and patterns[0] else sorted(types), out)
