"""Sigma rules read with pySigma become ordinary alert rules: detection rules as types and field conditions that
match real payload shapes, correlations as thresholds, distinct counts and sequences per group. What cannot be
expressed is refused whole, with one line naming the file, the rule and the field or modifier."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any, Final

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tenant_events.alert_settings import AlertSettings
from tenant_events.alerts import BUILTIN_RULES, load_rules
from tenant_events.alerts.matchers import compile_condition
from tenant_events.alerts.sigma_rules import SigmaRefused, merge_imported, read_sigma, rule_yaml

HEAD = """
logsource:
  product: auth0
  service: events
"""


def sigma(tmp_path, text, name="rules.yml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def one_rule(tmp_path, text):
    [found] = read_sigma(sigma(tmp_path, text))
    ruleset = load_rules([found.entry], BUILTIN_RULES)
    assert ruleset.errors == ()
    return ruleset.rules[-1]


def failing(rule, data):
    """The conditions of `rule` that `data` does not meet."""
    return [c for c in rule.conditions if not compile_condition(c)(data)]


def matches(rule, data):
    return not failing(rule, data)


def test_a_detection_rule_with_every_supported_modifier_matches_real_payload_shapes(tmp_path):
    rule = one_rule(
        tmp_path,
        f"""
        title: Admin role granted from outside
        name: admin-from-outside
        description: An admin-like role was granted by a script from outside the office network.
        tags: [attack.persistence, attack.t1098.003, attack.t1078]
        level: high
        {HEAD}
        detection:
          selection:
            type:
              - group.role.assigned
              - organization.member.role.assigned
            data.object.role.name|contains:
              - admin
              - owner
          script:
            data.context.client.id|startswith: cli_
            data.context.client.name|endswith: Script
          office:
            data.context.request.ip|cidr:
              - 10.0.0.0/8
              - 192.168.0.0/16
          mail:
            data.context.request.user_agent|re|i: '^curl/[0-9.]+ \\((linux|darwin)\\)$'
          both:
            data.object.role.description|contains|all:
              - full
              - access
          exact:
            data.object.role.id|cased: rol_RRRRRRRRRRRRRRRR
          has_org:
            data.object.organization.id|exists: true
          no_group:
            data.object.group|exists: false
          wild:
            data.context.client.id: 'cli_*_prod'
          condition: selection and script and not office and mail and both and exact and has_org and no_group and wild
    """.replace("\n        ", "\n"),
    )
    assert rule.id == "admin-from-outside" and rule.origin == "sigma" and rule.severity == "warning"
    assert rule.name == "Admin role granted from outside" and rule.explanation.startswith(
        "An admin-like role"
    )
    assert rule.types == ["group.role.assigned", "organization.member.role.assigned"]
    assert rule.mitre == ["T1098.003", "T1078"]  # techniques from the attack tags; the tactic is not one
    data = {
        "object": {
            "organization": {"id": "org_1"},
            "user": {"user_id": "auth0|1"},
            "role": {"id": "rol_RRRRRRRRRRRRRRRR", "name": "Org ADMIN", "description": "Full Access"},
        },
        "context": {
            "client": {"id": "cli_x_prod", "name": "Backoffice Script"},
            "request": {"ip": "203.0.113.9", "user_agent": "Curl/8.5 (Linux)"},
        },
    }
    assert failing(rule, data) == []

    def changed(path, value):
        out = {"object": dict(data["object"]), "context": {k: dict(v) for k, v in data["context"].items()}}
        head, *rest = path.split(".")
        target = out[head]
        for key in rest[:-1]:
            target[key] = dict(target[key])
            target = target[key]
        target[rest[-1]] = value
        return out

    for path, value in [
        ("object.role.name", "viewer"),  # contains: none of the list
        ("context.client.id", "app_x_prod"),  # startswith
        ("context.client.name", "Backoffice UI"),  # endswith
        ("context.request.ip", "10.1.2.3"),  # not in the office networks
        ("context.request.ip", "192.168.4.4"),
        ("context.request.user_agent", "curl/8.5 (windows)"),  # re
        ("object.role.description", "full control"),  # all: both words
        ("object.role.id", "ROL_RRRRRRRRRRRRRRRR"),  # cased
        ("object.group", {"id": "grp_1"}),  # exists: false
        ("context.client.id", "cli_x_staging"),  # a wildcard inside the value
    ]:
        assert not matches(rule, changed(path, value)), path
    assert not matches(
        rule,
        {
            "object": {k: v for k, v in data["object"].items() if k != "organization"},
            "context": data["context"],
        },
    )
    assert matches(rule, changed("context.request.ip", "2001:db8::1"))  # IPv6 is outside the IPv4 networks


@pytest.mark.parametrize(
    ("level", "severity"),
    [
        ("informational", "info"),
        ("low", "info"),
        ("medium", "warning"),
        ("high", "warning"),
        ("critical", "critical"),
    ],
)
def test_sigma_level_maps_to_severity(tmp_path, level, severity):
    rule = one_rule(
        tmp_path,
        f"title: T\nlevel: {level}\n{HEAD}detection:\n  s:\n    type: user.deleted\n  condition: s\n",
    )
    assert rule.severity == severity


def test_type_patterns_are_kept_and_a_rule_without_type_sees_every_event(tmp_path):
    rule = one_rule(
        tmp_path,
        f"title: Org changes\n{HEAD}detection:\n  s:\n    type:\n      - organization.*\n"
        "      - '*.deleted'\n  condition: s\n",
    )
    assert rule.types == ["organization.*", "*.deleted"] and "user.deleted" in rule.event_types
    rule = one_rule(
        tmp_path,
        f"title: Anything by one client\n{HEAD}detection:\n  s:\n"
        "    data.context.client.id: cli_1\n  condition: s\n",
    )
    assert rule.types == ["*"] and len(rule.event_types) == 22
    rule = one_rule(
        tmp_path,
        f"title: Not updates\n{HEAD}detection:\n  s:\n    type|startswith: user.\n"
        "  f:\n    type: user.updated\n  condition: s and not f\n",
    )
    assert rule.event_types == {"user.created", "user.deleted"}


CORRELATIONS = f"""
title: Role assigned
name: role-assigned
{HEAD}
detection:
  s:
    type: organization.member.role.assigned
    data.object.role.name|contains: admin
  condition: s
---
title: Role removed
name: role-removed
{HEAD}
detection:
  s:
    type: organization.member.role.deleted
    data.object.role.name|contains: admin
  condition: s
---
title: Deletions
name: deletions
{HEAD}
detection:
  s:
    type: [user.deleted, group.deleted, organization.deleted]
  condition: s
---
title: Sign-ups
name: signups
{HEAD}
detection:
  s:
    type: user.created
    data.object.phone_number|exists: true
  condition: s
"""


def test_correlations_become_thresholds_distinct_counts_and_sequences_per_group(tmp_path):
    sigma(tmp_path, CORRELATIONS, "base.yml")
    sigma(
        tmp_path,
        """
        title: Mass deletion by one client
        name: mass-deletion-by-client
        level: critical
        correlation:
          type: event_count
          rules: [deletions]
          group-by: [data.context.client.id]
          timespan: 10m
          condition: {gte: 10}
        ---
        title: Mass deletion per type
        name: mass-deletion-per-type
        correlation:
          type: event_count
          rules: [deletions]
          group-by: [type]
          timespan: 1m
          condition: {gt: 19}
        ---
        title: One phone on many users
        name: phone-reuse
        correlation:
          type: value_count
          rules: [signups]
          group-by: [data.object.phone_number]
          timespan: 24h
          condition: {field: data.object.user_id, gte: 3}
          generate: true
        ---
        title: Temporary elevation
        name: quick-elevation
        level: critical
        correlation:
          type: temporal_ordered
          rules: [role-assigned, role-removed]
          group-by: [data.object.user.user_id]
          timespan: 60m
        ---
        title: Granted and removed in any order
        name: grant-and-removal
        correlation:
          type: temporal
          rules: [role-assigned, role-removed]
          group-by: [data.object.organization.id]
          timespan: 1h
    """,
        "correlations.yml",
    )
    found = read_sigma(tmp_path)
    ruleset = load_rules([f.entry for f in found], BUILTIN_RULES)
    assert ruleset.errors == ()
    # the detection rules a correlation uses are part of it only, except with generate: true
    ids = [r.id for r in ruleset.rules if r.origin == "sigma"]
    assert sorted(ids) == sorted(
        [
            "signups",
            "mass-deletion-by-client",
            "mass-deletion-per-type",
            "phone-reuse",
            "quick-elevation",
            "grant-and-removal",
        ]
    )
    by_client = ruleset.get("mass-deletion-by-client")
    assert by_client.severity == "critical" and by_client.group_by == ["context.client.id"]
    assert (by_client.threshold.count, by_client.threshold.window_seconds) == (10, 600)
    assert by_client.types == ["user.deleted", "group.deleted", "organization.deleted"]
    per_type = ruleset.get("mass-deletion-per-type")
    assert per_type.threshold.per_type and per_type.threshold.count == 20 and per_type.group_by == []
    phone = ruleset.get("phone-reuse")
    assert phone.threshold.distinct == "object.user_id" and phone.threshold.count == 3
    assert phone.threshold.window_seconds == 86_400 and phone.group_by == ["object.phone_number"]
    assert phone.conditions[0].op == "exists"
    elevation = ruleset.get("quick-elevation")
    assert elevation.sequence.ordered and elevation.sequence.within_seconds == 3600
    assert [s.types for s in elevation.sequence.steps] == [
        ["organization.member.role.assigned"],
        ["organization.member.role.deleted"],
    ]
    assert all(s.conditions[0].value == "admin" for s in elevation.sequence.steps)
    assert elevation.group_by == ["object.user.user_id"] and elevation.threshold is None
    assert not ruleset.get("grant-and-removal").sequence.ordered


BAD = [
    ("not: [valid", "rules.yml: not valid YAML"),
    ("- a\n- b\n", "rules.yml: YAML document 1 is not a map of rule fields"),
    (
        f"title: Twice\n{HEAD}detection:\n  s:\n    type: user.deleted\n  s:\n    type: user.created\n"
        "  condition: s\n",
        "rules.yml: not valid YAML: Duplicate key 's'",
    ),
    (
        f"title: Missing\n{HEAD}detection:\n  s:\n    type: user.deleted\n  condition: s and f\n",
        "Sigma rule 'Missing': Detection 'f' not defined in detections",
    ),
    (
        f"title: Event id\n{HEAD}detection:\n  s:\n    EventID: 4624\n  condition: s\n",
        "Sigma rule 'Event id': EventID: not an event field",
    ),
    (
        f"title: Colour\n{HEAD}detection:\n  s:\n    type: user.deleted\n    data.object.colour|contains: red\n"
        "  condition: s\n",
        "Sigma rule 'Colour': data.object.colour|contains: unknown field: no event of the rule's "
        "types (user.deleted) carries the field 'object.colour'",
    ),
    (
        f"title: Encoded\n{HEAD}detection:\n  s:\n    data.object.email|base64: x\n  condition: s\n",
        "Sigma rule 'Encoded': data.object.email|base64: the modifier base64 is not supported",
    ),
    (
        f"title: Dashes\n{HEAD}detection:\n  s:\n    data.object.email|windash: -x\n  condition: s\n",
        "Sigma rule 'Dashes': data.object.email|windash: the modifier windash is not supported",
    ),
    (
        f"title: Bigger\n{HEAD}detection:\n  s:\n    data.object.logins_count|gt: 3\n  condition: s\n",
        "Sigma rule 'Bigger': data.object.logins_count|gt: the modifier gt is not supported",
    ),
    (
        f"title: Typo\n{HEAD}detection:\n  s:\n    data.object.email|contians: x\n  condition: s\n",
        "Sigma rule 'Typo':",
    ),
    (
        f"title: Backref\n{HEAD}detection:\n  s:\n    data.object.email|re: '(a)\\1'\n  condition: s\n",
        "Sigma rule 'Backref': data.object.email|re: regular expression '(a)\\\\1' does not compile in RE2",
    ),
    (
        "title: Okta\nlogsource:\n  product: okta\n  service: okta\ndetection:\n  s:\n    type: user.deleted\n"
        "  condition: s\n",
        "Sigma rule 'Okta': logsource: {product: okta, service: okta} is not this app's events",
    ),
    (
        f"title: Keyword\n{HEAD}detection:\n  k:\n    - evil\n  condition: k\n",
        "Sigma rule 'Keyword': keyword search",
    ),
    (
        f"title: Groups\n{HEAD}detection:\n  a:\n    data.object.email: x\n    data.object.name: y\n  b:\n"
        "    data.object.nickname: z\n  condition: a or b\n",
        "Sigma rule 'Groups': data.object.email: an 'or' of 'and' groups cannot be expressed",
    ),
    (
        f"title: Two ors\n{HEAD}detection:\n  a:\n    data.object.email: x\n  b:\n    data.object.name: y\n"
        "  c:\n    data.object.nickname: z\n  d:\n    data.object.blocked: true\n  condition: (a or b) and (c or d)\n",
        "Sigma rule 'Two ors': data.object.nickname: a second 'or' across fields cannot be expressed",
    ),
    (
        f"title: Type or\n{HEAD}detection:\n  a:\n    type: user.created\n  b:\n    data.object.name: y\n"
        "  condition: a or b\n",
        "Sigma rule 'Type or': type: an 'or' between the event type and data.object.name cannot be expressed",
    ),
    (
        f"title: Twice or\n{HEAD}detection:\n  a:\n    data.object.email: x\n  b:\n    data.object.name: y\n"
        "  condition: a or b\ntenant_events:\n  any_of: [{field: object.nickname, op: exists}]\n",
        "Sigma rule 'Twice or': tenant_events.any_of: the detection has alternatives (an 'or' across fields) already",
    ),
    (
        f"title: Step\nname: step\n{HEAD}detection:\n  s:\n    type: group.role.assigned\n  a:\n"
        "    data.context.client.id: x\n  b:\n    data.context.request.ip: 10.0.0.1\n  condition: s and (a or b)\n"
        "---\ntitle: Seq\ncorrelation:\n  type: temporal\n  rules: [step, role-removed]\n  timespan: 1m\n"
        "  condition: {gte: 2}\n---\n" + CORRELATIONS,
        "Sigma rule 'Seq': rules step: an 'or' across fields in a step of a sequence cannot be expressed",
    ),
    (
        f"title: Typo or\n{HEAD}detection:\n  s:\n    type: user.created\n  a:\n    data.object.email: x\n"
        "  b:\n    data.object.colour: y\n  condition: s and (a or b)\n",
        "Sigma rule 'Typo or': data.object.colour: "
        "unknown field: no event of the rule's types (user.created) carries the field 'object.colour'",
    ),
    (
        f"title: No type\n{HEAD}detection:\n  s:\n    type: user.exploded\n  condition: s\n",
        "Sigma rule 'No type': type: 'user.exploded' matches no event type",
    ),
    (
        CORRELATIONS
        + "---\ntitle: Sum\ncorrelation:\n  type: value_sum\n  rules: [deletions]\n  timespan: 1m\n"
        "  condition: {field: data.object.logins_count, gte: 5}\n",
        "Sigma rule 'Sum': correlation type value_sum: is not supported",
    ),
    (
        CORRELATIONS + "---\ntitle: Never\ncorrelation:\n  type: event_count\n  rules: [deletions]\n"
        "  group-by: [data.object.nope]\n  timespan: 1m\n  condition: {gte: 5}\n",
        "Sigma rule 'Never': group_by: no event of the rule's types",
    ),
    (
        CORRELATIONS + "---\ntitle: Zero\ncorrelation:\n  type: event_count\n  rules: [deletions]\n"
        "  timespan: 0s\n  condition: {gte: 5}\n",
        "Sigma rule 'Zero': Timespan '0s' must be greater than zero",
    ),
    (
        CORRELATIONS + "---\ntitle: Years\ncorrelation:\n  type: event_count\n  rules: [deletions]\n"
        "  timespan: 2y\n  condition: {gte: 5}\n",
        "Sigma rule 'Years': timespan 2y: is longer than a day",
    ),
    (
        CORRELATIONS + "---\ntitle: Fewer\ncorrelation:\n  type: event_count\n  rules: [deletions]\n"
        "  timespan: 1h\n  condition: {lte: 5}\n",
        "Sigma rule 'Fewer': condition.lte:",
    ),
    (
        CORRELATIONS + "---\ntitle: Lost\ncorrelation:\n  type: event_count\n  rules: [nowhere]\n"
        "  timespan: 1h\n  condition: {gte: 5}\n",
        "Sigma rule 'Lost': Rule 'nowhere' not found",
    ),
]


@pytest.mark.parametrize(("text", "line"), BAD, ids=[b[1].split(":")[0][:40] for b in BAD])
def test_what_cannot_be_expressed_is_refused_in_one_line_naming_file_rule_and_field(tmp_path, text, line):
    path = sigma(tmp_path, text)
    with pytest.raises(SigmaRefused) as caught:
        read_sigma(path)
    shown = str(caught.value)
    assert "\n" not in shown and shown.startswith(f"{path}: ") and shown.endswith("nothing was imported")
    assert line in shown, shown


def test_an_or_of_single_tests_on_different_fields_becomes_the_rules_alternatives(tmp_path):
    rule = one_rule(
        tmp_path,
        f"""
        title: Unverified or throwaway
        {HEAD}
        detection:
          s:
            type: user.created
          unverified:
            data.object.email_verified: false
          throwaway:
            data.object.email|endswith:
              - '@mailinator.com'
              - '@yopmail.com'
          named:
            data.object.name|contains: bot
          condition: s and (unverified or throwaway or not named)
        """.replace("\n        ", "\n"),
    )
    assert rule.types == ["user.created"] and rule.conditions == []
    assert [c.model_dump(exclude_defaults=True) for c in rule.any_of] == [
        {"field": "object.email_verified", "op": "equals", "value": "false"},
        {"field": "object.email", "op": "ends_with", "value": ["@mailinator.com", "@yopmail.com"]},
        {"field": "object.name", "op": "contains", "value": "bot", "negate": True},
    ]
    # "not (a and b)" is "not a or not b": alternatives, each negated on its own (never one negated value list)
    rule = one_rule(
        tmp_path,
        f"""
        title: Not both
        {HEAD}
        detection:
          s:
            type: user.created
          both:
            data.object.email|contains: admin
            data.object.name|contains: admin
          condition: s and not both
        """.replace("\n        ", "\n"),
    )
    assert [(c.field, c.negate) for c in rule.any_of] == [("object.email", True), ("object.name", True)]


def test_one_bad_file_in_a_folder_refuses_the_whole_folder(tmp_path):
    sigma(tmp_path, f"title: Good\n{HEAD}detection:\n  s:\n    type: user.deleted\n  condition: s\n", "a.yml")
    sigma(tmp_path, f"title: Bad\n{HEAD}detection:\n  s:\n    data.x|base64: y\n  condition: s\n", "b.yml")
    with pytest.raises(SigmaRefused, match=r"b\.yml: Sigma rule 'Bad': data\.x\|base64"):
        read_sigma(tmp_path)


def test_control_characters_from_a_file_are_escaped_in_the_error_line(tmp_path):
    path = sigma(tmp_path, f'title: "Evil\\x1b[2J"\n{HEAD}detection:\n  s:\n    Foo: 1\n  condition: s\n')
    with pytest.raises(SigmaRefused) as caught:
        read_sigma(path)
    assert "\x1b" not in str(caught.value) and "\\x1b" in str(caught.value)


def test_merging_replaces_an_earlier_import_and_never_a_rule_of_ones_own(tmp_path):
    path = sigma(
        tmp_path,
        f"title: Deleted\nname: deleted\nlevel: low\n{HEAD}detection:\n  s:\n"
        "    type: user.deleted\n  condition: s\n",
    )
    first = merge_imported(AlertSettings(), read_sigma(path))
    assert [r.id for r in first.rules] == ["deleted"] and first.replaced == ()
    path.write_text(path.read_text().replace("level: low", "level: critical"))
    again = merge_imported(first.alerts, read_sigma(path))
    assert again.replaced == ("deleted",) and len(again.alerts.rules) == 1
    assert load_rules(again.alerts.rules, BUILTIN_RULES).get("deleted").severity == "critical"
    mine = AlertSettings(rules=[{"id": "deleted", "name": "Mine", "types": ["user.deleted"]}])
    with pytest.raises(SigmaRefused, match="its id 'deleted' is a rule of your own"):
        merge_imported(mine, read_sigma(path))
    twice = sigma(tmp_path, path.read_text() + "---\n" + path.read_text(), "twice.yml")
    with pytest.raises(SigmaRefused, match="its id 'deleted' is also"):
        merge_imported(AlertSettings(), read_sigma(twice))


def test_a_sigma_rule_never_takes_a_built_in_rules_id_unless_it_is_that_rule_as_it_is(tmp_path):
    path = sigma(
        tmp_path,
        f"title: Grants\nname: temporary-elevation\nlevel: high\n{HEAD}detection:\n  s:\n"
        "    type: group.role.assigned\n  condition: s\n",
    )
    with pytest.raises(
        SigmaRefused, match="its id 'temporary-elevation' is a built-in rule's: give the Sigma rule"
    ):
        read_sigma(path)
    # what `rules export` writes of the unedited built-in reads back and changes nothing, not even an edit of it
    builtin = next(r for r in BUILTIN_RULES if r.id == "temporary-elevation")
    path.write_text(rule_yaml(builtin))
    edited = AlertSettings(rules=[{"id": "temporary-elevation", "severity": "info"}])
    merged = merge_imported(edited, read_sigma(path))
    assert merged.alerts.rules == edited.rules and merged.replaced == ()


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.sampled_from(
        ["user.deleted", "organization.*", "*admin*", "a?b", "10.0.0.0/8", "(a)\\1", "", "x" * 3, "\x1b[2J"]
    ),
)
KEYS = st.sampled_from(
    [
        "type",
        "type|startswith",
        "data.object.role.name|contains",
        "data.object.email|re",
        "data.ip|cidr",
        "data.x|exists",
        "data.y|contains|all",
        "data.z|base64",
        "EventID",
        "data.",
        "data.a|cased",
        "keywords",
    ]
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
    max_leaves=8,
)
DETECTIONS = st.dictionaries(
    st.sampled_from(["s", "f", "sel_1", "sel_2"]), VALUES, min_size=1, max_size=3
).flatmap(
    lambda d: st.sampled_from(
        ["s", "s and not f", "1 of sel_*", "all of them", "s or f", "not s", "s |"]
    ).map(lambda c: {**d, "condition": c})
)
DOCS = st.fixed_dictionaries(
    {
        "title": st.text(max_size=8),
        "logsource": st.sampled_from([{"product": "auth0", "service": "events"}, {}]),
        "detection": DETECTIONS,
    },
    optional={
        "level": st.sampled_from(["low", "critical", "loud"]),
        "name": st.sampled_from(["r1", "r2", "Bad!"]),
        "correlation": st.fixed_dictionaries(
            {
                "type": st.sampled_from(["event_count", "value_count", "temporal", "value_sum", "nope"]),
                "rules": st.lists(st.sampled_from(["r1", "r2", "r3"]), max_size=2),
                "timespan": st.sampled_from(["1m", "0s", "2y", "5x"]),
                "group-by": st.lists(st.sampled_from(["type", "data.object.user_id", "x"]), max_size=2),
                "condition": st.dictionaries(st.sampled_from(["gte", "lt", "field"]), SCALARS, max_size=2),
            }
        ),
    },
)


_UNTITLED: Final[dict[str, Any]] = {
    "title": "",
    "logsource": {"product": "auth0", "service": "events"},
    "detection": {"s": {"type": "user.deleted"}, "condition": "s"},
}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(docs=st.lists(DOCS, min_size=1, max_size=3))
@example(docs=[_UNTITLED, _UNTITLED])  # found by Hypothesis: two rules, one id
def test_any_file_either_imports_valid_rules_or_is_refused_in_one_line(tmp_path, docs):
    path = tmp_path / "fuzz.yml"
    path.write_text(yaml.safe_dump_all(docs, allow_unicode=True))
    try:  # read and merged into the settings, as `rules import` and the import dialog do
        merged = merge_imported(AlertSettings(), read_sigma(path))
    except SigmaRefused as exc:  # (two untitled rules of one file share an id: the merge refuses it)
        assert "\n" not in str(exc) and "\x1b" not in str(exc) and str(exc).startswith(str(path))
        return
    assert load_rules(merged.alerts.rules, BUILTIN_RULES).errors == ()


def test_a_device_a_huge_file_or_an_empty_folder_is_refused_without_reading_it_all(tmp_path):
    with pytest.raises(SigmaRefused, match="/dev/zero: is not a regular file"):
        read_sigma(Path("/dev/zero"))
    big = tmp_path / "big.yml"
    big.write_bytes(b"#" * 1_000_001)
    with pytest.raises(SigmaRefused, match=r"big\.yml: is larger than 1,000,000 bytes"):
        read_sigma(big)
    (tmp_path / "empty").mkdir()
    with pytest.raises(SigmaRefused, match=r"empty: no \.yml or \.yaml files in this folder"):
        read_sigma(tmp_path / "empty")


def test_a_rule_naming_a_settings_list_imports_where_that_list_exists(tmp_path):
    path = sigma(
        tmp_path,
        f"""title: Partner admin
name: partner-admin
{HEAD.strip()}
detection:
  s: {{type: organization.member.role.assigned}}
  condition: s
tenant_events:
  conditions:
    - {{field: context.client.name, op: in_list, value: partners}}
""",
    )
    with pytest.raises(SigmaRefused, match="no list named 'partners'"):
        read_sigma(path)
    alerts = AlertSettings(lists={"partners": ["Acme Sync"]})
    merged = merge_imported(alerts, read_sigma(path, lists=alerts.lists))
    [rule] = merged.rules
    assert rule.conditions[0].op == "in_list" and merged.alerts.lists == {"partners": ["Acme Sync"]}
