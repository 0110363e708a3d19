"""The rule form's conditions and exceptions as lines of text, and back.

Conditions    object.role.name contains admin, owner         (every line must hold)
              one of: object.email_verified equals false      (at least one line so marked must hold)
Exceptions    context.client.id equals cli_HRIMPORT           (one exception a line; the rule never fires
              context.request.ip cidr 10.0.0.0/8 and context.client.name equals Backoffice
                                                               for an event all tests of one line hold)
"""

from __future__ import annotations

from typing import Any, Final, get_args

from pydantic import ValidationError

from tenant_events.alerts.rule_model import Condition, Op, Rule
from tenant_events.alerts.rule_parts import RuleException

OPS: Final = get_args(Op)
NO_VALUE: Final = ("exists", "missing")
AND: Final = " and "  # the tests of one exception, on its line
NO_EXCEPTIONS: Final = "None: no event is exempt."
EXCEPTIONS_HINT: Final = (
    "One a line, like a condition, e.g. context.client.id equals cli_HRIMPORT; tests joined by “and” "
    "must all hold. The rule never fires for an event one line describes."
)
ONE_OF: Final = "one of:"  # a line so marked is an alternative (`any_of`): at least one of them must hold
NO_CONDITIONS: Final = "None: every event of the types above counts."
CONDITIONS_HINT: Final = (
    f"Format: one a line, field operator value, e.g. object.role.name contains admin, owner; “{ONE_OF}” "
    "before a line makes it one of several alternatives."
)


def _line(c: Condition) -> str:
    value = ", ".join(c.value) if isinstance(c.value, list) else (c.value or "")
    return f"{c.field} {c.op} {value}".rstrip()


def conditions_text(rule: Rule) -> str:
    """The conditions one a line, then the alternatives, each line marked `one of:`."""
    return "\n".join([*map(_line, rule.conditions), *(f"{ONE_OF} {_line(c)}" for c in rule.any_of)])


def parse_conditions(text: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str]:
    """Condition entries and alternatives (`any_of`) from the text, or the first line that cannot be one (its
    message)."""
    out: list[dict[str, Any]] = []
    alternatives: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        alternative = line.casefold().startswith(ONE_OF)
        parts = (line[len(ONE_OF) :] if alternative else line).split(None, 2)
        if not parts:
            continue
        if len(parts) < 2 or parts[1] not in OPS:
            return (
                [],
                [],
                (
                    f"line {number}: write “field operator value” (“{ONE_OF} field operator value” for "
                    f"one of several), the operator one of {', '.join(OPS)}"
                ),
            )
        field, op = parts[0], parts[1]
        values = [v.strip() for v in parts[2].split(",") if v.strip()] if len(parts) == 3 else []
        entry: dict[str, Any] = {"field": field, "op": op}
        if op not in NO_VALUE:
            entry["value"] = values[0] if len(values) == 1 else values
        elif values:
            return [], [], f"line {number}: {op} takes no value"
        (alternatives if alternative else out).append(entry)
    return out, alternatives, ""


KEPT_TIP: Final = (
    "These conditions use what one line of text cannot show (not, case-sensitive, a regex with "
    "a comma, changed from/to): they are kept as they are; change them in the settings file or "
    "import the Sigma rule again."
)


def same_conditions(parsed: list[dict[str, Any]], alternatives: list[dict[str, Any]], rule: Rule) -> bool:
    """Whether the conditions and alternatives read back from their text are the rule's own."""
    try:
        again = [Condition.model_validate(c) for c in parsed]
        either = [Condition.model_validate(c) for c in alternatives]
    except ValidationError:
        return False
    return again == list(rule.conditions) and either == list(rule.any_of)


def exceptions_text(rule: Rule) -> str:
    """The exceptions one a line, the tests of one joined by “and”."""
    return "\n".join(AND.join(map(_line, e.conditions)) for e in rule.except_)


def parse_exceptions(text: str) -> tuple[list[dict[str, Any]], str]:
    """Exception entries from the text, or the first line that cannot be one (its message)."""
    out: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        tests: list[dict[str, Any]] = []
        for part in line.split(AND):
            found, alternatives, problem = parse_conditions(part)
            if problem or alternatives or len(found) != 1:
                return [], (
                    f"line {number}: write “field operator value”, several joined by “and”, the operator "
                    f"one of {', '.join(OPS)}"
                )
            tests += found
        out.append({"conditions": tests})
    return out, ""


def same_exceptions(parsed: list[dict[str, Any]], rule: Rule) -> bool:
    """Whether the exceptions read back from their text are the rule's own."""
    try:
        again = [RuleException.model_validate(e) for e in parsed]
    except ValidationError:
        return False
    return again == list(rule.except_)
