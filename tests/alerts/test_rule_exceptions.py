"""Exceptions per rule (`except:`, Sigma's filters): the events they name never fire the rule, whatever else
holds, live and in a backlog, for single-event, threshold and sequence rules; a bad exception is refused with
the field named."""

from __future__ import annotations

import pytest

from tenant_events.alert_settings import WorkingHours
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


def test_an_exception_holds_in_a_catch_up_too(tmp_path):
    """A backlog evaluated an hour late (a catch-up: one summary alert per rule and group) leaves the excepted
    client out as live evaluation does: the script's deletions are one alert, the HR sync's none."""
    from helpers.alert_events import clock_at, event
    from tenant_events.alerts import Evaluator, RuleEngine
    from tenant_events.store import AlertInbox, Batch, StoreWriter

    ruleset = load_rules(
        [
            {
                "id": "mass-deletion-by-actor",
                "except": [{"field": "context.client.id", "op": "equals", "value": "cli_HRIMPORT"}],
            }
        ],
        BUILTIN_RULES,
    )
    [rule] = [r for r in ruleset.rules if r.id == "mass-deletion-by-actor"]
    clock = clock_at(3600)  # an hour after the events: every one of them is a catch-up's
    engine = RuleEngine([rule], hours=WorkingHours(), profile="demo", catch_up_after_s=300, clock=clock)
    rows = [event("user.deleted", i * 2, client=("cli_HRIMPORT", "HR Import")) for i in range(25)]
    rows += [
        event("user.deleted", 100 + i * 2, client=("cli_SCRIPT", "Backoffice Script")) for i in range(25)
    ]
    writer = StoreWriter(tmp_path / "demo.sqlite3")
    try:
        writer.commit_sync(Batch(events=rows, cursor="c1"))
        writer.run_alert_job(Evaluator(engine).step).result()
    finally:
        writer.close()
    with AlertInbox(tmp_path / "demo.sqlite3") as inbox:
        alerts = inbox.alerts()
    assert [(a.catch_up, a.rule_name) for a in alerts] == [
        (True, "Mass deletion by one actor · client Backoffice Script")
    ]
