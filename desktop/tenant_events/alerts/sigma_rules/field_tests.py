"""One Sigma field expression → one of the rule model's field tests, with `not` pushed down to the tests.

Each pySigma value kind (string with wildcards, regular expression, CIDR, exists, null, bool, number) becomes the
operator that tests the same thing, or is refused with the field and modifier as the file wrote them: a test
that would only approximate the Sigma rule is never made. Field names are the event's dotted JSON paths: `type`,
or a path under `data` (`data.object.role.name`).
"""

from __future__ import annotations

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

from tenant_events.alerts.rule_parts import re2_compile
from tenant_events.alerts.sigma_rules.refusal import Refusal

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


def spellings(rule: SigmaRule) -> dict[str, set[str]]:
    """Each field as the file wrote it, modifiers included: an error names the field as the user spelled it."""
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
