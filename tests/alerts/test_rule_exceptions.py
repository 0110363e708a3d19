"""Exceptions per rule (`except:`, Sigma's filters): the events they name never fire the rule, whatever else
holds, live and in a backlog, for single-event, threshold and sequence rules; a bad exception is refused with
the field named."""

from __future__ import annotations

import pytest

from tenant_events.alerts import BUILTIN_RULES, Rule, load_rules
from tenant_events.alerts.fixtures import run_rule_tests

HR = {"id": "cli_HRIMPORT", "name": "HR Import"}
SCRIPT = {"id": "cli_BACKOFFICE", "name": "Backoffice Script"}


def _deletions(client: dict, n: int = 25, ip: str = "203.0.113.9") -> list[dict]:
    return [
        {
            "type": "user.deleted",
            "at": i * 2,
            "data": {
                "object": {"user_id": f"auth0|u{i}", "email": f"u{i}@example.com"},
                "context": {"client": client, "request": {"ip": ip}},
            },
        }
        for i in range(n)
    ]


def test_the_hr_sync_may_delete_users_and_any_other_client_still_fires_the_built_in():
    ruleset = load_rules(
        [
            {
                "id": "mass-deletion-by-actor",
                "except": [{"field": "context.client.id", "op": "equals", "value": "cli_HRIMPORT"}],
                "tests": [
                    {"name": "the HR sync", "expect": "quiet", "events": _deletions(HR)},
                    {"name": "a script", "expect": "fires", "events": _deletions(SCRIPT)},
                ],
            }
        ],
        BUILTIN_RULES,
    )
    rule = ruleset.get("mass-deletion-by-actor")
    assert rule is not None and ruleset.errors == ()
    assert [r.line() for r in run_rule_tests(rule) if not r.passed] == []


def test_an_exception_of_several_tests_needs_all_of_them():
    rule = Rule.model_validate(
        {
            "id": "grants",
            "name": "Admin grant",
            "types": ["organization.member.role.assigned"],
            "except": [
                {
                    "conditions": [
                        {"field": "context.request.ip", "op": "cidr", "value": "10.0.0.0/8"},
                        {"field": "context.client.name", "op": "equals", "value": "HR Import"},
                    ]
                }
            ],
            "tests": [
                {"name": "HR Import from inside", "expect": "quiet", "events": [_grant(HR, "10.1.2.3")]},
                {"name": "HR Import from outside", "expect": "fires", "events": [_grant(HR, "203.0.113.9")]},
                {"name": "a script from inside", "expect": "fires", "events": [_grant(SCRIPT, "10.1.2.3")]},
            ],
        }
    )
    assert [r.line() for r in run_rule_tests(rule) if not r.passed] == []


def test_an_exception_holds_for_every_step_of_a_sequence():
    steps = [
        {"types": ["organization.member.role.assigned"]},
        {"types": ["organization.member.role.deleted"]},
    ]
    rule = Rule.model_validate(
        {
            "id": "elevation",
            "name": "Elevation",
            "types": ["organization.member.role.assigned", "organization.member.role.deleted"],
            "sequence": {"within_seconds": 600, "steps": steps},
            "group_by": ["object.user.user_id"],
            "except": [{"field": "object.user.user_id", "op": "equals", "value": "auth0|breakglass"}],
            "tests": [
                {"name": "break-glass", "expect": "quiet", "events": _elevation("auth0|breakglass")},
                {"name": "anyone else", "expect": "fires", "events": _elevation("auth0|grace")},
            ],
        }
    )
    assert [r.line() for r in run_rule_tests(rule) if not r.passed] == []


@pytest.mark.parametrize(
    ("exception", "message"),
    [
        (
            {"field": "object.nothing_here", "op": "equals", "value": "x"},
            "except.0.conditions.0.field: ",
        ),
        ({"field": "context.request.ip", "op": "cidr", "value": "nope"}, "is not a network"),
        ({"conditions": []}, "at least 1 item"),
        ({"field": "object.email", "op": "changed"}, "cannot be an exception"),
    ],
)
def test_a_bad_exception_is_refused_with_its_field(exception, message):
    ruleset = load_rules(
        [{"id": "own", "name": "Own", "types": ["user.deleted"], "except": [exception]}], BUILTIN_RULES
    )
    assert len(ruleset.errors) == 1 and message in str(ruleset.errors[0])
    assert "'own'" in str(ruleset.errors[0])


def test_an_exception_is_saved_as_except():
    rule = Rule.model_validate(
        {
            "id": "own",
            "name": "Own",
            "types": ["user.deleted"],
            "except": [{"op": "exists", "field": "object"}],
        }
    )
    dumped = rule.model_dump(mode="json")
    assert "except" in dumped and "except_" not in dumped
    assert Rule.model_validate(dumped) == rule


def _grant(client: dict, ip: str) -> dict:
    return {
        "type": "organization.member.role.assigned",
        "data": {
            "object": {
                "organization": {"id": "org_AAAAAAAAAAAAAAAA"},
                "user": {"user_id": "auth0|grace"},
                "role": {"id": "rol_1", "name": "Org Admin"},
            },
            "context": {"client": client, "request": {"ip": ip}},
        },
    }


def _elevation(user: str) -> list[dict]:
    data = {
        "object": {
            "organization": {"id": "org_AAAAAAAAAAAAAAAA"},
            "user": {"user_id": user},
            "role": {"id": "rol_1", "name": "Org Admin"},
        }
    }
    return [
        {"type": "organization.member.role.assigned", "at": 0, "data": data},
        {"type": "organization.member.role.deleted", "at": 60, "data": data},
    ]
