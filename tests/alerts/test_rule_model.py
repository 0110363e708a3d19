"""Rules as data: built-ins changed field by field, rules of one's own, and one clear error per bad rule that names
the rule and the field while the good rules keep working."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tenant_events.alert_settings import WorkingHours
from tenant_events.alerts import BUILTIN_RULES, Condition, load_rules
from tenant_events.alerts.matchers import WorkingHoursClock, compile_condition, expand_types


def test_builtins_are_on_explained_and_the_per_type_kind_is_opt_in():
    rules = load_rules([], BUILTIN_RULES).rules
    assert [r.id for r in rules if r.enabled] == [
        "mass-deletion",
        "mass-deletion-by-actor",
        "admin-role",
        "admin-group-member",
        "temporary-elevation",
        "org-connection",
        "org-connection-onboarding",
        "org-deleted",
        "admin-group-deleted",
        "signup-burst",
        "signup-wave",
        "shared-phone",
        "account-linked",
        "new-privileged-actor",
        "off-hours",
    ]
    assert not next(r for r in rules if r.id == "event-types").enabled
    for rule in rules:
        assert rule.explanation.endswith(".") and rule.explanation.count(". ") == 0, rule.id
    assert {r.severity for r in rules if r.severity == "critical"} == {"critical"}
    assert [r.id for r in rules if r.severity == "critical"] == [
        "mass-deletion",
        "mass-deletion-by-actor",
        "admin-role",
        "temporary-elevation",
    ]


def test_an_entry_changes_only_the_fields_it_names_and_own_rules_follow():
    entries = [
        {"id": "admin-role", "enabled": False},
        {"id": "mass-deletion", "threshold": {"count": 5, "window_seconds": 10}},
        {
            "id": "org-watch",
            "name": "Acme org touched",
            "types": ["organization.*"],
            "conditions": [{"op": "mentions", "value": "org_AAAAAAAAAAAAAAAA"}],
            "severity": "critical",
        },
    ]
    ruleset = load_rules(entries, BUILTIN_RULES)
    assert ruleset.errors == ()
    assert not ruleset.get("admin-role").enabled
    mass = ruleset.get("mass-deletion")
    assert (mass.threshold.count, mass.threshold.window_seconds, mass.severity) == (5, 10, "critical")
    assert ruleset.rules[-1].id == "org-watch" and len(ruleset.get("org-watch").event_types) == 12


@pytest.mark.parametrize(
    ("entry", "text"),
    [
        (
            {"id": "mass-deletion", "threshold": {"count": 0, "window_seconds": 60}},
            "alert rule 'mass-deletion': threshold.count: Input should be greater than or equal to 2",
        ),
        (
            {"id": "mine", "name": "Mine", "types": ["usr.*"]},
            "alert rule 'mine': types: 'usr.*' matches no event type (e.g. user.deleted or organization.*)",
        ),
        ({"id": "mine", "types": ["user.deleted"]}, "alert rule 'mine': name: Field required"),
        (
            {"id": "mine", "name": "Mine", "types": ["user.deleted"], "severity": "loud"},
            "alert rule 'mine': severity: Input should be 'info', 'warning' or 'critical'",
        ),
        (
            {"id": "mine", "name": "Mine", "types": ["user.deleted"], "conditions": [{"op": "contains"}]},
            "alert rule 'mine': conditions.0: contains needs a value",
        ),
        (
            {"id": "mine", "name": "Mine", "types": ["user.deleted"], "colour": "red"},
            "alert rule 'mine': colour: Extra inputs are not permitted",
        ),
        (
            {"id": "Mine!", "name": "Mine", "types": ["user.deleted"]},
            "alert rule 'Mine!': id: 'Mine!' must be 1–64 lowercase letters, digits or dashes",
        ),
        ({"name": "No id", "types": ["user.deleted"]}, "alert rule #1: id: Field required"),
        (
            {"id": "off-hours", "time_of_day": {"hours": {"timezone": "Mars/Olympus"}}},
            "alert rule 'off-hours': time_of_day.hours.timezone: 'Mars/Olympus' is not a time zone name such as "
            "Europe/Berlin or UTC",
        ),
    ],
)
def test_a_bad_rule_is_named_with_its_field_and_the_others_still_load(entry, text):
    ruleset = load_rules([entry, {"id": "good", "name": "Good", "types": ["user.created"]}], BUILTIN_RULES)
    assert [str(e) for e in ruleset.errors] == [text]
    assert ruleset.get("good") is not None and len(ruleset.rules) == len(BUILTIN_RULES) + 1


def test_a_duplicate_id_and_a_non_object_entry_are_refused():
    own = {"id": "dup", "name": "Dup", "types": ["user.created"]}
    ruleset = load_rules([own, own, "nonsense"], BUILTIN_RULES)  # type: ignore[list-item]
    assert [str(e) for e in ruleset.errors] == [
        "alert rule 'dup': id: is used by another rule",
        "alert rule #3: is not an object",
    ]


def test_type_patterns():
    assert expand_types(["organization.connection.*"]) == {
        "organization.connection.added",
        "organization.connection.removed",
        "organization.connection.updated",
    }
    assert len(expand_types(["*.deleted"])) == 8 and len(expand_types(["*"])) == 22


def test_field_conditions_on_real_payload_shapes():
    data = {
        "object": {
            "organization": {"id": "org_1"},
            "user": {"user_id": "auth0|42"},
            "role": {"id": "rol_1", "name": "Org Admin"},
            "count": 3,
            "flag": True,
        }
    }
    contains = compile_condition(Condition(field="object.role.name", op="contains", value=["admin", "owner"]))
    assert contains(data) and not contains({"object": {"role": {"name": "viewer"}}}) and not contains({})
    exact = compile_condition(
        Condition(field="object.role.name", op="equals", value="org admin", ignore_case=False)
    )
    assert not exact(data)
    assert compile_condition(Condition(field="object.count", op="equals", value="3"))(data)
    assert compile_condition(Condition(field="object.flag", op="equals", value="true"))(data)
    assert compile_condition(Condition(op="mentions", value="AUTH0|42"))(data)
    assert not compile_condition(Condition(op="mentions", value="auth0|4"))(data)
    assert compile_condition(Condition(field="object.role", op="exists"))(data)
    assert compile_condition(Condition(field="object.group", op="missing"))(data)
    assert not compile_condition(Condition(field="object.role", op="contains", value="admin"))(
        data
    )  # an object


def _ms(text: str) -> int:
    return int(datetime.fromisoformat(text).astimezone(UTC).timestamp() * 1000)


def test_working_hours_in_their_time_zone_and_across_midnight():
    berlin = WorkingHoursClock(WorkingHours(start="08:00", end="18:00", timezone="Europe/Berlin"))
    assert berlin.inside(_ms("2026-11-04T08:00:00+01:00"))  # Wednesday, the first minute
    assert not berlin.inside(_ms("2026-11-04T07:59:59+01:00"))
    assert not berlin.inside(_ms("2026-11-04T18:00:00+01:00"))  # the end is outside
    assert not berlin.inside(_ms("2026-11-07T12:00:00+01:00"))  # Saturday
    assert berlin.inside(_ms("2026-11-04T11:30:00+00:00"))  # 12:30 in Berlin
    night = WorkingHoursClock(WorkingHours(start="22:00", end="06:00", days=["fri"], timezone="UTC"))
    assert night.inside(_ms("2026-11-06T23:00:00+00:00"))  # Friday night
    assert night.inside(_ms("2026-11-07T05:59:00+00:00"))  # Saturday morning belongs to Friday's shift
    assert not night.inside(_ms("2026-11-07T23:00:00+00:00"))  # Saturday night: not a working day
    always = WorkingHoursClock(WorkingHours(start="00:00", end="00:00", days=["mon", "sun"], timezone="UTC"))
    assert always.inside(_ms("2026-11-09T23:59:59+00:00")) and always.inside(_ms("2026-11-08T00:00:00+00:00"))
    assert not always.inside(_ms("2026-11-10T12:00:00+00:00"))  # a Tuesday
