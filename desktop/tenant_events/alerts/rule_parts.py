"""The parts of an alert rule beyond one event's conditions: correlation over several events, novelty, state
from the entity directory, and the fixtures a rule is tested with. Data only, validated field by field;
rule_model.Rule holds them and checks them against the rule's event types.

    group_by   ["context.client.id|context.request.ip"]   count per acting client, else per request IP
    threshold  {count: 10, window_seconds: 600, distinct: object.user_id}
    sequence   {steps: [{types: [...]}, {types: [...]}], within_seconds: 3600, ordered: true}
    novelty    {key: context.client.id, days: 30}
    state      [{check: group_holds_admin_role}]
    tests      [{name: …, expect: fires, events: [{type: …, at: 0, data: {…}}]}]
    except     [{field: context.client.id, op: equals, value: [hr-import]}, {conditions: [...]}]
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any, Literal

import re2  # linear-time matching: no rule can hang evaluation
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from tenant_events.alerts.type_patterns import expand_types

FIELD_PATH = re.compile(r"^[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*$")
MAX_WINDOW_S = 86_400.0  # a day: longer correlations belong to novelty (days), not to a window in memory


def re2_compile(pattern: str, *, ignore_case: bool = False) -> Any:
    """The RE2 program for `pattern` (re2.error if it does not compile; RE2 logs nothing to stderr)."""
    options = re2.Options()
    options.log_errors = False
    options.case_sensitive = not ignore_case
    return re2.compile(pattern, options)


def check_path(v: str) -> str:
    """A dotted path under the event's `data` (a leading `data.` is accepted and dropped)."""
    path = v.removeprefix("data.")
    if not FIELD_PATH.match(path):
        raise ValueError(f"{v!r} is not a dotted field path such as object.role.name")
    return path


def check_key(v: str) -> str:
    """A group key: one path, or fallbacks `a|b` (the first one the event carries)."""
    return "|".join(check_path(p.strip()) for p in v.split("|"))


Op = Literal[
    "equals",
    "contains",
    "starts_with",
    "ends_with",
    "exists",
    "missing",
    "mentions",
    "regex",
    "in_list",
    "domain_in_list",
    "changed",
    "grew",
    "cidr",
]
BUILTIN_LISTS: frozenset[str] = frozenset({"disposable-email-domains"})


class Condition(BaseModel):
    """A test on the event's `data` at a dotted path, e.g. `object.role.name` contains "admin".

    A list `value` means any of them. `mentions`: some id anywhere under `field` (default `object`) equals the
    value, which is how "the object is user X / organization Y" is written. `regex`: RE2 syntax (linear time).
    `in_list` / `domain_in_list`: the value (or an e-mail's domain) is in a named list — the maintained
    `disposable-email-domains` or one of `alerts.lists` in the settings. `changed` (on `*.updated`): the field
    differs from the object's state before the update, optionally `changed_from` / `changed_to` given values;
    `grew`: a list field got longer (a user's identities). `cidr`: an IP address inside one of the networks
    (`10.0.0.0/8`). `negate`: the test must not hold (Sigma's `not`; a missing field passes)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    field: str = "object"
    op: Op
    value: str | list[str] | None = None
    ignore_case: bool = True
    negate: bool = False
    changed_from: str | None = None
    changed_to: str | None = None

    @field_validator("field")
    @classmethod
    def _path(cls, v: str) -> str:
        return check_path(v)

    @model_validator(mode="after")
    def _value_fits_op(self, info: ValidationInfo) -> Condition:
        if self.op in ("exists", "missing", "changed", "grew"):
            if self.value is not None:
                raise ValueError(f"{self.op} takes no value")
        elif self.value is None or self.value == "" or self.value == []:
            raise ValueError(f"{self.op} needs a value")
        if (self.changed_from is not None or self.changed_to is not None) and self.op != "changed":
            raise ValueError("changed_from and changed_to go with op changed")
        values = [self.value] if isinstance(self.value, str) else list(self.value or [])
        if self.op == "regex":
            for pattern in values:
                try:
                    re2_compile(pattern)
                except re2.error as exc:
                    why = (
                        exc.args[0].decode(errors="replace")
                        if exc.args and isinstance(exc.args[0], bytes)
                        else exc
                    )
                    raise ValueError(f"regex {pattern!r} does not compile (RE2 syntax): {why}") from None
        if self.op == "cidr":
            for network in values:
                try:
                    ipaddress.ip_network(network)
                except ValueError as exc:
                    raise ValueError(f"{network!r} is not a network such as 10.0.0.0/8: {exc}") from None
        if self.op in ("in_list", "domain_in_list"):
            known = BUILTIN_LISTS | frozenset((info.context or {}).get("lists", ()))
            for name in values:
                if name not in known:
                    raise ValueError(f"no list named {name!r} (known: {', '.join(sorted(known))})")
        return self


class RuleException(BaseModel):
    """Events that never fire the rule: every one of `conditions` holds (a Sigma filter: `not filter_…`), e.g.
    the acting client is HR Import, the request came from 10.0.0.0/8, the organization is one of a list.
    Written short as one condition (`{field: context.client.id, op: equals, value: hr-import}`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    conditions: list[Condition] = Field(min_length=1, max_length=8)

    @model_validator(mode="before")
    @classmethod
    def _short(cls, v: Any) -> Any:
        return {"conditions": [v]} if isinstance(v, dict) and "op" in v else v

    @model_validator(mode="after")
    def _plain(self) -> RuleException:
        for i, cond in enumerate(self.conditions):
            if cond.op in ("changed", "grew"):
                raise ValueError(f"conditions.{i}.op: {cond.op} cannot be an exception")
        return self


class SequenceStep(BaseModel):
    """One step of a sequence: events of these types meeting these conditions (see rule_model.Condition)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    types: list[str] = Field(min_length=1)
    conditions: list[Condition] = Field(default_factory=list)

    @field_validator("types")
    @classmethod
    def _types(cls, v: list[str]) -> list[str]:
        for pattern in v:
            expand_types([pattern])
        return v

    @property
    def event_types(self) -> frozenset[str]:
        return expand_types(self.types)


class Sequence(BaseModel):
    """Each step's event for the same group, within `within_seconds` by event time (half-open: events exactly
    that far apart are not in one sequence); `ordered`: the steps happened in the order given."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    steps: list[SequenceStep] = Field(min_length=2, max_length=5)
    within_seconds: float = Field(gt=0, le=MAX_WINDOW_S)
    ordered: bool = True


class Novelty(BaseModel):
    """Fires only the first time in `days` days that the key (a client, an IP, an actor) did one of the rule's
    event types (meeting its conditions); `per_type`: each type on its own. A list of keys is a combination
    (Elastic's new terms): "the first time this client granted an admin role in this organization in 30 days"
    is `key: [context.client.id, object.organization.id]`. The sightings come from the stored events: a restart
    reads the period back from the store before it evaluates anything new."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    key: str | list[str]
    days: float = Field(gt=0, le=365)
    per_type: bool = False

    @field_validator("key")
    @classmethod
    def _key(cls, v: str | list[str]) -> str | list[str]:
        if isinstance(v, list):
            if not 1 <= len(v) <= 4:
                raise ValueError("a combination is 1 to 4 fields")
            return [check_key(k) for k in v]
        return check_key(v)

    @property
    def keys(self) -> list[str]:
        """The key's fields (one, or the combination's)."""
        return list(self.key) if isinstance(self.key, list) else [self.key]


StateCheckName = Literal[
    "group_holds_admin_role",
    "group_held_admin_role",
    "user_is_org_admin",
    "connection_added_within",
    "organization_created_within",
]


class StateCheck(BaseModel):
    """A condition on the entity directory's state when the event is evaluated: the group the event is about
    holds an admin-like role now (`held`: held it until this event, as a deleted group did); the user is an
    admin of the event's organization; the connection the event is about was added to the organization within
    `minutes`; the event's organization was created within `minutes` before it (set-up traffic: a new customer's
    connections and first admins). `negate`: the check must not hold."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    check: StateCheckName
    minutes: float | None = Field(None, gt=0, le=10_080)
    negate: bool = False


class FixtureEvent(BaseModel):
    """One event of a fixture: its type, seconds after the fixture's start, and its `data`."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    type: str
    at: float = Field(0.0, ge=0, le=30 * 86_400)
    data: dict[str, Any] = Field(default_factory=dict)
    purpose: str | None = None

    @field_validator("type")
    @classmethod
    def _type(cls, v: str) -> str:
        if len(expand_types([v])) != 1 or "*" in v:
            raise ValueError(f"{v!r} is not one event type")
        return v


class RuleTest(BaseModel):
    """Events that must fire the rule (`expect: fires`) or must not (`quiet`), evaluated on their own."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(min_length=1, max_length=120)
    expect: Literal["fires", "quiet"]
    events: list[FixtureEvent] = Field(min_length=1, max_length=500)
