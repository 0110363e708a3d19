"""`rules export --sigma` output is real Sigma: pySigma loads every file without an error, and reading it back
gives the same rules — the whole built-in pack and own rules using every part of the rule model."""

from __future__ import annotations

import pytest
import yaml
from sigma.collection import SigmaCollection
from sigma.correlations import SigmaCorrelationRule

from tenant_events.alerts import BUILTIN_RULES, Rule, load_rules
from tenant_events.alerts.fixtures import run_rule_tests
from tenant_events.alerts.sigma_rules import NotExpressible, read_sigma, rule_yaml

OWN = [
    Rule.model_validate(entry)
    for entry in [
        {
            "id": "every-test",
            "name": "Every test Sigma has",
            "severity": "critical",
            "mitre": ["T1098", "T1078.004"],
            "types": ["organization.member.role.assigned", "group.role.assigned"],
            "conditions": [
                {"field": "object.role.name", "op": "contains", "value": ["admin", "own*er"]},
                {"field": "object.role.id", "op": "equals", "value": "rol_1", "ignore_case": False},
                {"field": "context.client.id", "op": "starts_with", "value": "cli_", "negate": True},
                {"field": "context.client.name", "op": "ends_with", "value": "Script?"},
                {"field": "context.request.ip", "op": "cidr", "value": ["10.0.0.0/8", "2001:db8::/32"]},
                {"field": "context.request.user_agent", "op": "regex", "value": "^[a-z]+/[0-9]"},
                {"field": "context.connection.name", "op": "regex", "value": "(?s)a.b", "ignore_case": False},
                {"field": "object.organization.id", "op": "exists"},
                {"field": "object.group", "op": "missing"},
                {"field": "object.role.description", "op": "equals", "value": "back\\slash"},
            ],
        },
        {
            "id": "beyond-sigma",
            "name": "What Sigma has no words for",
            "enabled": False,
            "notify": False,
            "severity": "info",
            "types": ["user.updated", "user.created"],
            "coalesce_minutes": 3,
            "tenants": ["demo"],
            "include_test_events": True,
            "time_of_day": {"when": "inside_working_hours", "hours": {"start": "09:00", "end": "17:00"}},
            "conditions": [
                {"op": "mentions", "value": "org_AAAAAAAAAAAAAAAA"},
                {"field": "object.email", "op": "domain_in_list", "value": "disposable-email-domains"},
                {"field": "object.blocked", "op": "changed", "changed_to": "true"},
                {"field": "object.name", "op": "equals", "value": "x"},
            ],
            "tests": [
                {
                    "name": "a blocked user",
                    "expect": "quiet",
                    "events": [{"type": "user.updated", "data": {"object": {"user_id": "auth0|1"}}}],
                }
            ],
        },
        {
            "id": "by-client-else-ip",
            "name": "Deletions per actor",
            "severity": "critical",
            "types": ["user.deleted", "group.deleted", "organization.deleted"],
            "threshold": {"count": 10, "window_seconds": 600},
            "group_by": ["context.client.id|context.request.ip"],
        },
        {
            "id": "phone-reuse",
            "name": "One phone number, many users",
            "types": ["user.created"],
            "conditions": [{"field": "object.phone_number", "op": "exists"}],
            "threshold": {"count": 3, "window_seconds": 86400, "distinct": "object.user_id"},
            "group_by": ["object.phone_number"],
        },
        {
            "id": "per-type-and-org",
            "name": "Per type and organization",
            "types": ["organization.member.*"],
            "threshold": {"count": 5, "window_seconds": 90, "per_type": True},
            "group_by": ["object.organization.id", "context.client.id"],
        },
        {
            "id": "grouped-alerts",
            "name": "Every connection change, per organization",
            "types": ["organization.connection.*"],
            "group_by": ["object.organization.id"],
        },
        {
            "id": "elevation",
            "name": "Temporary elevation",
            "severity": "critical",
            "types": ["organization.member.role.assigned", "organization.member.role.deleted"],
            "sequence": {
                "within_seconds": 3600,
                "ordered": True,
                "steps": [
                    {
                        "types": ["organization.member.role.assigned"],
                        "conditions": [
                            {"field": "object.role.name", "op": "contains", "value": ["admin", "owner"]}
                        ],
                    },
                    {
                        "types": ["organization.member.role.deleted"],
                        "conditions": [
                            {"field": "object.role.name", "op": "contains", "value": ["admin", "owner"]}
                        ],
                    },
                ],
            },
            "group_by": ["object.user.user_id"],
        },
        {
            "id": "elevation-outside",
            "name": "Elevation by an unknown client, from outside",
            "types": ["organization.member.role.*"],
            "conditions": [
                {"field": "context.request.ip", "op": "cidr", "value": "10.0.0.0/8", "negate": True},
                {"field": "context.client.name", "op": "in_list", "value": "disposable-email-domains"},
            ],
            "sequence": {
                "within_seconds": 600,
                "steps": [
                    {"types": ["organization.member.role.assigned"]},
                    {
                        "types": ["organization.member.role.deleted"],
                        "conditions": [{"field": "context.client.id", "op": "starts_with", "value": "cli_"}],
                    },
                ],
            },
            "group_by": ["object.user.user_id|context.client.id"],
        },
        {
            "id": "either-in-sigma",
            "name": "Unverified, throwaway-looking or unnamed",
            "types": ["user.created"],
            "conditions": [{"field": "object.user_id", "op": "starts_with", "value": "auth0|"}],
            "any_of": [
                {"field": "object.email_verified", "op": "equals", "value": "false"},
                {"field": "object.email", "op": "ends_with", "value": ["@mailinator.com", "@yopmail.com"]},
                {"field": "object.email", "op": "contains", "value": "+bulk"},
                {"field": "object.name", "op": "contains", "value": "bot", "negate": True},
                {"field": "object.nickname", "op": "missing"},
            ],
        },
        {
            "id": "either-beyond-sigma",
            "name": "Unverified or at a listed domain",
            "types": ["user.created"],
            "any_of": [
                {"field": "object.email_verified", "op": "equals", "value": "false"},
                {"field": "object.email", "op": "domain_in_list", "value": "disposable-email-domains"},
            ],
        },
        {
            "id": "either-counted",
            "name": "Many unverified or unnamed",
            "types": ["user.created"],
            "any_of": [
                {"field": "object.email_verified", "op": "equals", "value": "false"},
                {"field": "object.name", "op": "missing"},
            ],
            "threshold": {"count": 20, "window_seconds": 300},
            "group_by": ["context.client.id"],
        },
        {
            "id": "either-in-sequence",
            "name": "Granted and taken by a script or from outside",
            "types": ["group.role.assigned", "group.role.deleted"],
            "any_of": [
                {"field": "context.client.name", "op": "ends_with", "value": "Script"},
                {"field": "context.request.ip", "op": "cidr", "value": "10.0.0.0/8", "negate": True},
            ],
            "sequence": {
                "within_seconds": 600,
                "steps": [{"types": ["group.role.assigned"]}, {"types": ["group.role.deleted"]}],
            },
            "group_by": ["object.group.id"],
        },
        {
            "id": "deletions-but-hr-import",
            "name": "Mass deletion, except the HR sync",
            "types": ["user.deleted"],
            "threshold": {"count": 10, "window_seconds": 600},
            "group_by": ["context.client.id"],
            "except": [
                {"field": "context.client.id", "op": "equals", "value": ["cli_HRIMPORT", "cli_HRSYNC"]},
                {
                    "conditions": [
                        {"field": "context.request.ip", "op": "cidr", "value": "10.0.0.0/8"},
                        {"field": "context.client.name", "op": "starts_with", "value": "Backoffice"},
                    ]
                },
                {"field": "object.email", "op": "domain_in_list", "value": "disposable-email-domains"},
            ],
        },
        {
            "id": "grant-but-not-these-orgs",
            "name": "Admin grant, not in the test organizations",
            "types": ["organization.member.role.assigned"],
            "conditions": [{"field": "object.role.name", "op": "contains", "value": "admin"}],
            "except": [
                {"field": "object.organization.id", "op": "equals", "value": ["org_TEST1", "org_TEST2"]}
            ],
        },
        {
            "id": "elevation-but-break-glass",
            "name": "Temporary elevation, not the break-glass account",
            "types": ["organization.member.role.assigned", "organization.member.role.deleted"],
            "except": [{"field": "object.user.user_id", "op": "equals", "value": "auth0|breakglass"}],
            "sequence": {
                "within_seconds": 3600,
                "steps": [
                    {"types": ["organization.member.role.assigned"]},
                    {"types": ["organization.member.role.deleted"]},
                ],
            },
            "group_by": ["object.user.user_id"],
        },
        {
            "id": "any-order",
            "name": "Granted and taken in any order",
            "types": ["group.role.assigned", "group.role.deleted", "group.member.added"],
            "sequence": {
                "within_seconds": 120,
                "ordered": False,
                "steps": [
                    {"types": ["group.role.assigned"]},
                    {"types": ["group.role.deleted"]},
                    {"types": ["group.member.added"]},
                ],
            },
            "group_by": ["object.group.id"],
        },
    ]
]


def _behaviour(rule: Rule) -> dict:
    """Everything that makes the rule behave as it does (its conditions are an AND: their order is not)."""
    dumped = rule.model_dump(mode="json", exclude={"origin"})
    dumped["conditions"] = sorted(dumped["conditions"], key=repr)
    return dumped


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The pack and the own rules exported once for the module (the tests only read the files): written for each
    of its 46 tests, the export took most of the module's 10 s."""
    folder = tmp_path_factory.mktemp("exported")
    for rule in (*BUILTIN_RULES, *OWN):
        (folder / f"{rule.id}.yml").write_text(rule_yaml(rule), encoding="utf-8")
    return folder


def test_pysigma_loads_every_exported_file_without_an_error(exported):
    collection = SigmaCollection.load_ruleset([exported], collect_errors=True)
    assert collection.errors == []
    correlations = [r for r in collection if isinstance(r, SigmaCorrelationRule)]
    names = {r.name for r in correlations}
    assert {
        "mass-deletion",
        "signup-burst",
        "by-client-else-ip",
        "phone-reuse",
        "elevation",
        "any-order",
    } <= names
    for rule in collection:
        assert rule.errors == [] and rule.level is not None
        if not isinstance(rule, SigmaCorrelationRule):
            assert (rule.logsource.product, rule.logsource.service) == ("auth0", "events")
            assert rule.detection.parsed_condition[0].parse() is not None
    kinds = {r.name: r.type.name.lower() for r in correlations}
    assert kinds["phone-reuse"] == "value_count" and kinds["elevation"] == "temporal_ordered"
    assert kinds["any-order"] == "temporal" and kinds["mass-deletion"] == "event_count"


@pytest.mark.parametrize("rule", [*BUILTIN_RULES, *OWN], ids=lambda r: r.id)
def test_each_rule_reads_back_to_the_same_rule(exported, rule):
    [found] = read_sigma(exported / f"{rule.id}.yml")
    # a built-in's id reads back as that built-in changed (as an edit of it would), any other as Sigma's
    assert found.rule.origin == ("builtin" if rule in BUILTIN_RULES else "sigma") and found.rule.id == rule.id
    assert _behaviour(found.rule) == _behaviour(rule)
    # and the file alone says all of it (nothing filled in from the built-in of the same id)
    assert _behaviour(from_file_alone(found)) == _behaviour(rule) | {"id": "copy"}


def from_file_alone(found):
    ruleset = load_rules([{**found.entry, "id": "copy"}], ())
    assert ruleset.errors == ()
    return ruleset.rules[0]


@pytest.mark.parametrize("rule", [r for r in BUILTIN_RULES if r.tests], ids=lambda r: r.id)
def test_each_built_in_read_back_from_its_file_passes_its_fixtures(exported, rule):
    [found] = read_sigma(exported / f"{rule.id}.yml")
    back = from_file_alone(found)
    results = run_rule_tests(back)
    assert len(results) == len(rule.tests) >= 2
    assert {r.expect for r in results} == {"fires", "quiet"}
    assert [r.line() for r in results if not r.passed] == []


def test_the_whole_pack_reads_back_from_the_folder_in_one_import(exported):
    found = read_sigma(exported)
    assert {f.rule.id: _behaviour(f.rule) for f in found} == {
        r.id: _behaviour(r) for r in (*BUILTIN_RULES, *OWN)
    }


def test_alternatives_sigma_can_say_are_in_the_detection_for_other_sigma_tools(exported):
    [doc] = yaml.safe_load_all((exported / "either-in-sigma.yml").read_text())
    assert doc["detection"]["condition"] == (
        "selection and test1 and (either1 or either2 or either3 or not either4 or either5)"
    )
    assert "tenant_events" not in doc
    # with a list test Sigma has no words for, the alternatives stay together in the extension, whole
    [doc] = yaml.safe_load_all((exported / "either-beyond-sigma.yml").read_text())
    assert doc["detection"]["condition"] == "selection" and len(doc["tenant_events"]["any_of"]) == 2
    *_, signup_wave = yaml.safe_load_all((exported / "signup-wave.yml").read_text())
    assert [c["op"] for c in signup_wave["tenant_events"]["any_of"]] == ["equals", "domain_in_list"]


def test_exceptions_are_sigma_filters_for_other_sigma_tools(exported):
    [doc] = yaml.safe_load_all((exported / "grant-but-not-these-orgs.yml").read_text())
    assert doc["detection"]["condition"] == "selection and test1 and not filter1"
    assert doc["detection"]["filter1"] == {"data.object.organization.id": ["org_TEST1", "org_TEST2"]}
    assert "tenant_events" not in doc
    *_, counted = yaml.safe_load_all((exported / "deletions-but-hr-import.yml").read_text())
    # an exception with a list test Sigma has no words for stays in the extension; the others are filters
    assert [c["op"] for e in counted["tenant_events"]["except"] for c in e["conditions"]] == [
        "domain_in_list"
    ]
    first, _ = yaml.safe_load_all((exported / "deletions-but-hr-import.yml").read_text())
    assert first["detection"]["condition"] == "selection and not filter1 and not filter2"
    assert first["detection"]["filter2"] == {
        "data.context.request.ip|cidr": "10.0.0.0/8",
        "data.context.client.name|startswith": "Backoffice",
    }


def test_a_sigma_filter_written_by_hand_reads_as_an_exception(tmp_path):
    (tmp_path / "hand.yml").write_text(
        """title: Users deleted, not by the HR sync
name: deleted-not-hr
logsource: {product: auth0, service: events}
detection:
  selection: {type: user.deleted}
  filter_hr: {data.context.client.name: HR Import}
  filter_office: {data.context.request.ip|cidr: [192.0.2.0/24, 198.51.100.0/24]}
  condition: selection and not filter_hr and not filter_office
level: medium
""",
        encoding="utf-8",
    )
    [found] = read_sigma(tmp_path / "hand.yml")
    assert found.rule.conditions == []
    assert [e.model_dump(mode="json") for e in found.rule.except_] == [
        {"conditions": [{**_plain("context.client.name", "equals", "HR Import")}]},
        {
            "conditions": [
                {
                    **_plain("context.request.ip", "cidr", ["192.0.2.0/24", "198.51.100.0/24"]),
                    "ignore_case": True,
                }
            ]
        },
    ]


def _plain(field, op, value):
    return {
        "field": field,
        "op": op,
        "value": value,
        "ignore_case": True,
        "negate": False,
        "changed_from": None,
        "changed_to": None,
    }


def test_a_rule_sigma_cannot_hold_is_named_not_written():
    rule = Rule.model_validate(
        {
            "id": "half-second",
            "name": "Half",
            "types": ["user.deleted"],
            "threshold": {"count": 2, "window_seconds": 0.5},
        }
    )
    with pytest.raises(NotExpressible, match=r"a window of 0\.5 s is not whole seconds"):
        rule_yaml(rule)
