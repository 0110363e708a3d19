"""An alert rule as data: which events it looks at, what must hold, how many in what time, how loud.

    types ──▶ tenant scope ──▶ conditions on `data` (all of them, and one of `any_of`) ──▶ time of day ──▶ state ──▶ novelty
          ──▶ per group (group_by) ──▶ threshold window (count or distinct count) | sequence ──▶ alert (severity)

Rules come from the settings file (`alerts.rules`, alert_settings.py): an entry whose `id` is a built-in rule's
changes only the fields it names; any other entry is a whole rule of its own. Each entry is validated on its
own (`load_rules`), and a bad one becomes a `RuleError` that names the rule and the field, e.g.
`alert rule 'mass-deletion': threshold.count: Input should be greater than or equal to 2`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Annotated, Any, Final, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from tenant_events.alert_settings import WorkingHours
from tenant_events.alerts.event_fields import check_carried
from tenant_events.alerts.rule_parts import (
    MAX_WINDOW_S,
    Novelty,
    RuleException,
    RuleTest,
    Sequence,
    StateCheck,
    check_key,
)
from tenant_events.alerts.rule_parts import Condition as Condition  # re-exported: a rule's building block
from tenant_events.alerts.rule_parts import Op as Op
from tenant_events.alerts.type_patterns import expand_types
from tenant_events.values.alerts import Severity

SEVERITIES: tuple[Severity, ...] = ("info", "warning", "critical")
_RULE_ID = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$")


class Threshold(BaseModel):
    """At least `count` matching events within `window_seconds` (by event time; a window is half-open: events
    exactly `window_seconds` apart are not in one window). `per_type`: each event type counts on its own
    (20 users or 20 groups deleted, not 10 of each). `distinct`: count distinct values of that field instead
    (one phone number on 3 distinct users)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    count: int = Field(ge=2, le=1_000_000)
    window_seconds: float = Field(gt=0, le=MAX_WINDOW_S)
    per_type: bool = False
    distinct: str | None = None

    @field_validator("distinct")
    @classmethod
    def _distinct(cls, v: str | None) -> str | None:
        return None if v is None else check_key(v)


class TimeOfDay(BaseModel):
    """Only events that occurred outside (or inside) working hours; `hours` None: the app's working hours."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    when: Literal["outside_working_hours", "inside_working_hours"] = "outside_working_hours"
    hours: WorkingHours | None = None


DEFAULT_RESOLVE_AFTER_MINUTES: Final = 30.0  # threshold and grouping rules resolve after this long quiet


class Rule(BaseModel):
    """One alert rule. `coalesce_minutes`: a firing this soon after the firing that raised the rule's (the
            group's) open alert folds into it as a new version, said again (values/alert_lifecycle.py); later, it is a new
            alert. `resolve_after_minutes`: the alert resolves after this long without a firing (None: 30 for threshold
            and grouping rules, never for the others; 0: never). `renotify`: a warning alert notifies on the desktop
            again at each firing folded into it (a critical one always does, an info one never). `group_by`: thresholds, sequences
            and alerts are per value of these fields (each may name fallbacks, `a|b`), and the alert names its group.
            `any_of`: alternatives, at least one of which must hold as well as every one of `conditions` (none: no
            test), e.g. the address is unverified or at a throwaway domain. `except` (Sigma's filters): events that never
        fire the rule, whatever else holds — a client, an IP range, an organization, a list of users. `tests`: fixtures that must fire the rule or
            must not (`tenant-events rules test`). `max_alerts_per_day`: the rule's noise budget, which `rules test` and a
    backtest report any day over. `mitre`: MITRE ATT&CK technique ids (T1098, T1098.003)."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, validate_by_name=True, validate_by_alias=True, serialize_by_alias=True
    )
    id: str
    name: str = Field(min_length=1, max_length=80)
    explanation: str = Field("", max_length=300)
    enabled: bool = True
    notify: bool = True
    severity: Severity = "warning"
    types: list[str] = Field(min_length=1)
    conditions: list[Condition] = Field(default_factory=list)
    any_of: list[Condition] = Field(default_factory=list, max_length=20)
    except_: list[RuleException] = Field(default_factory=list, max_length=50, alias="except")
    threshold: Threshold | None = None
    time_of_day: TimeOfDay | None = None
    tenants: list[str] = Field(default_factory=list, description="tenant ids or profile names; empty = all")
    include_test_events: bool = False
    coalesce_minutes: float = Field(10.0, ge=0, le=1440)
    resolve_after_minutes: float | None = Field(None, ge=0, le=10_080)
    renotify: bool = True
    max_alerts_per_day: int | None = Field(None, ge=1, le=100_000)
    group_by: list[Annotated[str, AfterValidator(check_key)]] = Field(default_factory=list, max_length=4)
    sequence: Sequence | None = None
    novelty: Novelty | None = None
    state: list[StateCheck] = Field(default_factory=list, max_length=4)
    tests: list[RuleTest] = Field(default_factory=list, max_length=50)
    origin: Literal["builtin", "own", "sigma"] = "own"
    mitre: list[Annotated[str, Field(pattern=r"^T\d{4}(?:\.\d{3})?$")]] = Field(
        default_factory=list, max_length=6
    )

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

    @model_validator(mode="after")
    def _parts_fit_types(self) -> Rule:
        types = self.event_types
        if self.sequence is not None:
            if self.threshold is not None:
                raise ValueError("a rule has a threshold or a sequence, not both")
            for i, step in enumerate(self.sequence.steps):
                if not step.event_types <= types:
                    raise ValueError(f"sequence.steps.{i}.types: not among the rule's types")
        _carried("group_by", self.group_by, types)
        if self.threshold is not None and self.threshold.distinct:
            _carried("threshold.distinct", [self.threshold.distinct], types)
        if self.novelty is not None:
            _carried("novelty.key", self.novelty.keys, types)
        for i, cond in enumerate(self.conditions):
            if cond.op in ("changed", "grew") and not any(t.endswith(".updated") for t in types):
                raise ValueError(f"conditions.{i}: {cond.op} needs *.updated events among the types")
        for i, cond in enumerate(self.any_of):
            if cond.op in ("changed", "grew"):
                raise ValueError(f"any_of.{i}.op: {cond.op} cannot be an alternative (put it in conditions)")
            _carried(f"any_of.{i}.field", [cond.field], types)
        for i, exception in enumerate(self.except_):
            for j, cond in enumerate(exception.conditions):
                _carried(f"except.{i}.conditions.{j}.field", [cond.field], types)
        return self

    @property
    def window_seconds(self) -> float:
        """How far back the rule's state reaches in event time (0: it keeps none)."""
        if self.threshold is not None:
            return self.threshold.window_seconds
        return self.sequence.within_seconds if self.sequence is not None else 0.0

    @property
    def resolve_after_s(self) -> float:
        """Seconds without a firing after which its alert resolves (0: never)."""
        if self.resolve_after_minutes is not None:
            return self.resolve_after_minutes * 60
        grouping = self.threshold is not None or bool(self.group_by)
        return DEFAULT_RESOLVE_AFTER_MINUTES * 60 if grouping else 0.0

    @property
    def event_types(self) -> frozenset[str]:
        """The event type names the patterns stand for."""
        return expand_types(self.types)


def _carried(where: str, keys: Iterable[str], types: frozenset[str]) -> None:
    for key in keys:
        for path in key.split("|"):
            try:
                check_carried(path, types)
            except ValueError as exc:
                raise ValueError(f"{where}: {exc}") from None


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


def load_rules(
    entries: list[dict[str, Any]], builtins: tuple[Rule, ...], *, lists: Iterable[str] = ()
) -> RuleSet:
    """The built-in rules changed by the entries that name them, followed by the entries' own rules; `lists`:
    the names of the settings' value lists a condition may use (`in_list`)."""
    context = {"lists": frozenset(lists)}
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
            if base is not None:
                rule = Rule.model_validate(
                    {**base.model_dump(), **entry, "origin": "builtin"}, context=context
                )
            else:
                own_origin = "sigma" if entry.get("origin") == "sigma" else "own"
                rule = Rule.model_validate({**entry, "origin": own_origin}, context=context)
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
