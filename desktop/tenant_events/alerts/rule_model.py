"""An alert rule as data: which events it looks at, what must hold, how many in what time, how loud.

    types ──▶ tenant scope ──▶ conditions on `data` ──▶ time of day ──▶ threshold window ──▶ alert (severity)

Rules come from the settings file (`alerts.rules`, alert_settings.py): an entry whose `id` is a built-in rule's
changes only the fields it names; any other entry is a whole rule of its own. Each entry is validated on its
own (`load_rules`), and a bad one becomes a `RuleError` that names the rule and the field, e.g.
`alert rule 'mass-deletion': threshold.count: Input should be greater than or equal to 2`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from tenant_events.alert_settings import WorkingHours
from tenant_events.alerts.type_patterns import expand_types
from tenant_events.store.alert_records import Severity

SEVERITIES: tuple[Severity, ...] = ("info", "warning", "critical")
_RULE_ID = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$")
_FIELD_PATH = re.compile(r"^[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*$")
Op = Literal["equals", "contains", "starts_with", "ends_with", "exists", "missing", "mentions"]


class Condition(BaseModel):
    """A test on the event's `data` at a dotted path, e.g. `object.role.name` contains "admin".

    A list `value` means any of them. `mentions`: some id anywhere under `field` (default `object`) equals the
    value, which is how "the object is user X / organization Y" is written."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    field: str = "object"
    op: Op
    value: str | list[str] | None = None
    ignore_case: bool = True

    @field_validator("field")
    @classmethod
    def _path(cls, v: str) -> str:
        if not _FIELD_PATH.match(v):
            raise ValueError(f"{v!r} is not a dotted field path such as object.role.name")
        return v

    @model_validator(mode="after")
    def _value_fits_op(self) -> Condition:
        if self.op in ("exists", "missing"):
            if self.value is not None:
                raise ValueError(f"{self.op} takes no value")
        elif self.value is None or self.value == "" or self.value == []:
            raise ValueError(f"{self.op} needs a value")
        return self


class Threshold(BaseModel):
    """At least `count` matching events within `window_seconds` (by event time; a window is half-open: events
    exactly `window_seconds` apart are not in one window). `per_type`: each event type counts on its own
    (20 users or 20 groups deleted, not 10 of each)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    count: int = Field(ge=2, le=1_000_000)
    window_seconds: float = Field(gt=0, le=86_400)
    per_type: bool = False


class TimeOfDay(BaseModel):
    """Only events that occurred outside (or inside) working hours; `hours` None: the app's working hours."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    when: Literal["outside_working_hours", "inside_working_hours"] = "outside_working_hours"
    hours: WorkingHours | None = None


class Rule(BaseModel):
    """One alert rule. `coalesce_minutes`: a firing this soon after the rule's open alert folds into it."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    name: str = Field(min_length=1, max_length=80)
    explanation: str = Field("", max_length=300)
    enabled: bool = True
    notify: bool = True
    severity: Severity = "warning"
    types: list[str] = Field(min_length=1)
    conditions: list[Condition] = Field(default_factory=list)
    threshold: Threshold | None = None
    time_of_day: TimeOfDay | None = None
    tenants: list[str] = Field(default_factory=list, description="tenant ids or profile names; empty = all")
    include_test_events: bool = False
    coalesce_minutes: float = Field(10.0, ge=0, le=1440)

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        if not _RULE_ID.match(v):
            raise ValueError(f"{v!r} must be 1–64 lowercase letters, digits or dashes")
        return v

    @field_validator("types")
    @classmethod
    def _types(cls, v: list[str]) -> list[str]:
        for pattern in v:
            expand_types([pattern])  # raises ValueError naming a pattern that matches no event type
        return v

    @property
    def event_types(self) -> frozenset[str]:
        """The event type names the patterns stand for."""
        return expand_types(self.types)


@dataclass(frozen=True, slots=True)
class RuleError:
    """One bad rule entry: which rule (its id, or its position), which field, what is wrong."""

    rule: str
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.field}: " if self.field else ""
        return f"alert rule {self.rule}: {where}{self.message}"


@dataclass(frozen=True, slots=True)
class RuleSet:
    """The rules in effect (built-ins with their changes, then one's own, in order) and the entries refused."""

    rules: tuple[Rule, ...]
    errors: tuple[RuleError, ...]

    def get(self, rule_id: str) -> Rule | None:
        return next((r for r in self.rules if r.id == rule_id), None)


def _error(label: str, exc: ValidationError) -> RuleError:
    first = exc.errors()[0]
    field = ".".join(str(p) for p in first.get("loc", ()))
    message = str(first.get("msg", "")).removeprefix("Value error, ")
    return RuleError(label, field, message)


def load_rules(entries: list[dict[str, Any]], builtins: tuple[Rule, ...]) -> RuleSet:
    """The built-in rules changed by the entries that name them, followed by the entries' own rules."""
    by_id = {r.id: r for r in builtins}
    changed: dict[str, Rule] = {}
    own: list[Rule] = []
    errors: list[RuleError] = []
    for index, entry in enumerate(entries):
        raw_id = entry.get("id") if isinstance(entry, dict) else None
        label = repr(raw_id) if isinstance(raw_id, str) and raw_id else f"#{index + 1}"
        if not isinstance(entry, dict):
            errors.append(RuleError(label, "", "is not an object"))
            continue
        base = by_id.get(raw_id) if isinstance(raw_id, str) else None
        try:
            rule = Rule.model_validate({**base.model_dump(), **entry} if base else entry)
        except ValidationError as exc:
            errors.append(_error(label, exc))
            continue
        if base is not None:
            changed[rule.id] = rule
        elif rule.id in changed or any(r.id == rule.id for r in own):
            errors.append(RuleError(label, "id", "is used by another rule"))
        else:
            own.append(rule)
    rules = tuple(changed.get(r.id, r) for r in builtins) + tuple(own)
    return RuleSet(rules, tuple(errors))
