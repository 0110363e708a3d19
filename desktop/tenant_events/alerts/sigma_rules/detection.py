"""A Sigma detection (pySigma's parsed condition tree) → the rule model's event types and field conditions.

    condition tree ──▶ negation pushed to the leaves ──▶ an AND of clauses ──▶ `type` clauses: event types
                                                                           ├─▶ value lists: one condition each
                                                                           └─▶ one OR across fields: `any_of`

A clause is one field test, an OR of tests on the same field with the same modifier (a value list), or an OR of
single tests on different fields (the rule's alternatives, `any_of`; a rule has one such list). A shape the
rule model cannot hold (an OR of AND groups, a second OR across fields, the event type as an alternative, a
keyword without a field) is refused with the field or modifier named, never approximated. The leaves, each a field
test, come from field_tests.py.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import Any

from sigma.conditions import ConditionAND, ConditionIdentifier, ConditionNOT
from sigma.rule import SigmaRule

from tenant_events.alerts.event_fields import check_carried
from tenant_events.alerts.sigma_rules.field_tests import Test, Tree, check_modifiers, nnf, spellings
from tenant_events.alerts.sigma_rules.refusal import Refusal
from tenant_events.wire.event_types import EVENT_TYPE_NAMES


@dataclass(frozen=True, slots=True)
class Detection:
    """What one Sigma detection rule says in the rule model's terms."""

    types: list[str]
    conditions: list[dict[str, Any]]
    any_of: list[dict[str, Any]] = field(default_factory=list)
    excepts: list[dict[str, Any]] = field(default_factory=list)


def _flatten(tree: Tree, kind: str) -> list[Tree]:
    if isinstance(tree, tuple) and tree[0] == kind:
        return [x for sub in tree[1] for x in _flatten(sub, kind)]
    return [tree]


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
    spelled = spellings(rule)
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
