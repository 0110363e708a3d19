"""The grown rule model: group-by, distinct counts, sequences, novelty, lists, changes, RE2 regexes — each
validated field by field, a bad one named with its rule and field."""

from __future__ import annotations

import pytest

from tenant_events.alerts import BUILTIN_RULES, load_rules

GOOD = [
    {
        "id": "by-client",
        "name": "By client",
        "types": ["user.deleted"],
        "group_by": ["data.context.client.id|context.request.ip"],
        "threshold": {"count": 10, "window_seconds": 600},
    },
    {
        "id": "phone",
        "name": "Phone",
        "types": ["user.created", "user.updated"],
        "group_by": ["object.phone_number"],
        "threshold": {"count": 3, "window_seconds": 86400, "distinct": "object.user_id"},
    },
    {
        "id": "elevation",
        "name": "Elevation",
        "types": ["group.role.*"],
        "group_by": ["object.group.id"],
        "sequence": {
            "steps": [
                {
                    "types": ["group.role.assigned"],
                    "conditions": [{"field": "object.role.name", "op": "contains", "value": "admin"}],
                },
                {"types": ["group.role.deleted"]},
            ],
            "within_seconds": 3600,
            "ordered": False,
        },
    },
    {
        "id": "throwaway",
        "name": "Throwaway",
        "types": ["user.created"],
        "conditions": [
            {"field": "object.email", "op": "domain_in_list", "value": "disposable-email-domains"}
        ],
    },
    {
        "id": "blocked",
        "name": "Blocked",
        "types": ["user.updated"],
        "conditions": [{"field": "object.blocked", "op": "changed", "changed_to": "true"}],
    },
    {
        "id": "new-client",
        "name": "New client",
        "types": ["group.role.assigned"],
        "novelty": {"key": "context.client.id", "days": 30},
        "state": [{"check": "group_holds_admin_role"}],
    },
    {
        "id": "re",
        "name": "Regex",
        "types": ["user.created"],
        "conditions": [{"field": "object.email", "op": "regex", "value": "^(a+)+$"}],
    },
    {
        "id": "unverified-or-throwaway",
        "name": "Either",
        "types": ["user.created"],
        "any_of": [
            {"field": "data.object.email_verified", "op": "equals", "value": "false"},
            {"field": "object.email", "op": "domain_in_list", "value": "disposable-email-domains"},
        ],
    },
]


def test_each_new_part_loads_and_keeps_its_meaning():
    ruleset = load_rules(GOOD, BUILTIN_RULES)
    assert ruleset.errors == ()
    by_client = ruleset.get("by-client")
    assert by_client is not None and by_client.group_by == ["context.client.id|context.request.ip"]
    assert by_client.origin == "own" and ruleset.get("mass-deletion").origin == "builtin"
    elevation = ruleset.get("elevation")
    assert elevation is not None and elevation.sequence is not None and not elevation.sequence.ordered
    assert elevation.window_seconds == 3600
    either = ruleset.get("unverified-or-throwaway")
    assert either is not None and [c.field for c in either.any_of] == [
        "object.email_verified",
        "object.email",
    ]


def _one(entry, **kw):
    [error] = load_rules([entry], BUILTIN_RULES, **kw).errors
    return str(error)


BASE = {"id": "bad", "name": "Bad", "types": ["user.deleted"]}


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            {"group_by": ["object.role.name"]},
            "alert rule 'bad': group_by: no event of the rule's types (user.deleted) carries the field 'object.role.name'",
        ),
        (
            {"threshold": {"count": 3, "window_seconds": 0}},
            "alert rule 'bad': threshold.window_seconds: Input should be greater than 0",
        ),
        (
            {"threshold": {"count": 3, "window_seconds": 3 * 365 * 86400}},
            "alert rule 'bad': threshold.window_seconds: Input should be less than or equal to 86400",
        ),
        (
            {"conditions": [{"field": "object.email", "op": "regex", "value": "(a"}]},
            "alert rule 'bad': conditions.0: Value error, regex '(a' does not compile (RE2 syntax): missing ): (a",
        ),
        ({"colour": "red"}, "alert rule 'bad': colour: Extra inputs are not permitted"),
        (
            {"conditions": [{"field": "object.email", "op": "in_list", "value": "vip"}]},
            "alert rule 'bad': conditions.0: Value error, no list named 'vip' (known: disposable-email-domains)",
        ),
        (
            {"conditions": [{"field": "object.email", "op": "changed"}]},
            "alert rule 'bad': conditions.0: changed needs *.updated events among the types",
        ),
        (
            {
                "sequence": {
                    "steps": [{"types": ["user.deleted"]}, {"types": ["group.deleted"]}],
                    "within_seconds": 60,
                }
            },
            "alert rule 'bad': sequence.steps.1.types: not among the rule's types",
        ),
        (
            {"novelty": {"key": "context.client.id", "days": 4000}},
            "alert rule 'bad': novelty.days: Input should be less than or equal to 365",
        ),
        (
            {"group_by": ["object..id"]},
            "alert rule 'bad': group_by.0: Value error, 'object..id' is not a dotted field path such as object.role.name",
        ),
        (
            {"any_of": [{"field": "object.role.name", "op": "equals", "value": "x"}]},
            "alert rule 'bad': any_of.0.field: no event of the rule's types (user.deleted) carries the field 'object.role.name'",
        ),
        (
            {
                "any_of": [
                    {"field": "object.email", "op": "exists"},
                    {"field": "object.email", "op": "near", "value": "x"},
                ]
            },
            "alert rule 'bad': any_of.1.op: Input should be 'equals', 'contains', 'starts_with', 'ends_with', 'exists', 'missing', 'mentions', 'regex', 'in_list', 'domain_in_list', 'changed', 'grew' or 'cidr'",
        ),
        (
            {"any_of": [{"field": "object.email", "op": "regex", "value": "(a"}]},
            "alert rule 'bad': any_of.0: Value error, regex '(a' does not compile (RE2 syntax): missing ): (a",
        ),
        (
            {"any_of": [{"field": "object.email", "op": "in_list", "value": "vip"}]},
            "alert rule 'bad': any_of.0: Value error, no list named 'vip' (known: disposable-email-domains)",
        ),
        (
            {"any_of": [{"field": "object..id", "op": "exists"}]},
            "alert rule 'bad': any_of.0.field: Value error, 'object..id' is not a dotted field path such as object.role.name",
        ),
        (
            {"types": ["user.updated"], "any_of": [{"field": "object.blocked", "op": "changed"}]},
            "alert rule 'bad': any_of.0.op: changed cannot be an alternative (put it in conditions)",
        ),
        (
            {"any_of": {"field": "object.email", "op": "exists"}},
            "alert rule 'bad': any_of: Input should be a valid list",
        ),
    ],
)
def test_bad_input_is_one_line_naming_rule_and_field(change, expected):
    assert _one({**BASE, **change}).replace("Value error, ", "") == expected.replace("Value error, ", "")


def test_a_list_from_the_settings_is_known_by_name():
    entry = {**BASE, "conditions": [{"field": "object.email", "op": "in_list", "value": "vip"}]}
    assert load_rules([entry], BUILTIN_RULES, lists=["vip"]).errors == ()
