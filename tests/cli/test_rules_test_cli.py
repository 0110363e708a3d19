"""`tenant-events rules test`: the built-in pack's fixtures pass; one's own rules in YAML carry `tests:`; a
failing fixture exits 1; a bad file or rule is one line naming it, exit 3, the settings file untouched."""

from __future__ import annotations

import json

import pytest

from helpers.cli_here import run_here

pytestmark = pytest.mark.expect_warning_logs  # (run in this process) a command logs the error line it prints


def rules(tmp_path, *args):
    return run_here(["rules", "test", *args, "--data-dir", str(tmp_path)], limit=120)


def test_the_builtin_pack_passes_its_fixtures(tmp_path):
    done = rules(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) >= 30 and all(line.startswith(("ok   ", "--   ")) for line in lines), lines
    assert "ok   temporary-elevation: removed exactly an hour later (expected: quiet; did not fire)" in lines
    assert done.stderr.strip().endswith("0 failed")


OWN = """\
- id: vip-deleted
  name: VIP deleted
  types: [user.deleted]
  conditions:
    - {field: object.email, op: regex, value: '^ceo@'}
  tests:
    - name: the CEO deleted
      expect: fires
      events: [{type: user.deleted, data: {object: {user_id: "auth0|1", email: ceo@example.com}}}]
    - name: someone else deleted
      expect: %s
      events: [{type: user.deleted, data: {object: {user_id: "auth0|2", email: bob@example.com}}}]
"""


@pytest.mark.parametrize(("expect", "code"), [("quiet", 0), ("fires", 1)])
def test_own_rules_in_yaml_carry_fixtures(tmp_path, expect, code):
    path = tmp_path / "mine.yml"
    path.write_text(OWN % expect)
    done = rules(tmp_path, str(path))
    assert done.returncode == code, done.stderr
    assert done.stdout.splitlines()[0] == "ok   vip-deleted: the CEO deleted (expected: fires; fired 1×)"
    verdict = "ok  " if code == 0 else "FAIL"
    assert (
        done.stdout.splitlines()[1]
        == f"{verdict} vip-deleted: someone else deleted (expected: {expect}; did not fire)"
    )


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (
            "- id: x\n  name: X\n  types: [user.deleted]\n  group_by: [object.role.name]\n",
            "alert rule 'x': group_by: no event of the rule's types (user.deleted) carries the field 'object.role.name'",
        ),
        (
            "- id: x\n  name: X\n  types: [user.deleted]\n  threshold: {count: 5, window_seconds: 0}\n",
            "alert rule 'x': threshold.window_seconds: Input should be greater than 0",
        ),
        (
            "- id: x\n  name: X\n  types: [user.deleted]\n  threshold: {count: 5, window_seconds: 94608000}\n",
            "alert rule 'x': threshold.window_seconds: Input should be less than or equal to 86400",
        ),
        (
            "- id: x\n  name: X\n  types: [user.created]\n  conditions: [{field: object.email, op: regex, value: '(a'}]\n",
            "alert rule 'x': conditions.0: regex '(a' does not compile (RE2 syntax): missing ): (a",
        ),
        (
            "- id: x\n  name: X\n  types: [user.created]\n  colour: red\n",
            "alert rule 'x': colour: Extra inputs are not permitted",
        ),
        (
            "- id: x\n  name: X\n  types: [user.created]\n  any_of: [{field: object.email, op: exists}, {field: object.role.name, op: exists}]\n",
            "alert rule 'x': any_of.1.field: no event of the rule's types (user.created) carries the field 'object.role.name'",
        ),
        (
            "- id: x\n  name: X\n  types: [user.created]\n  any_of: [{field: object.email, op: near, value: a}]\n",
            "alert rule 'x': any_of.0.op: Input should be 'equals', 'contains', 'starts_with', 'ends_with', 'exists', "
            "'missing', 'mentions', 'regex', 'in_list', 'domain_in_list', 'changed', 'grew' or 'cidr'",
        ),
        ("a: [\n", "cannot be read as rules: line 2: expected the node content, but found '<stream end>'"),
    ],
)
def test_bad_input_is_one_line_exit_3_and_the_settings_stay(tmp_path, text, line):
    settings = tmp_path / "settings.json"
    settings.write_text(
        json.dumps({"schema_version": 1, "alerts": {"rules": [{"id": "off-hours", "enabled": False}]}})
    )
    assert (
        rules(tmp_path, "off-hours").returncode == 0
    )  # the settings file as the app keeps it (migrated once)
    before = settings.read_bytes()
    path = tmp_path / "bad.yml"
    path.write_text(text)
    done = rules(tmp_path, str(path))
    assert done.returncode == 3
    assert done.stderr.strip().splitlines() == [f"tenant-events: {path}: {line}"]
    assert settings.read_bytes() == before


EITHER = """\
- id: unverified-or-throwaway
  name: Unverified or throwaway
  types: [user.created]
  any_of:
    - {field: object.email_verified, op: equals, value: 'false'}
    - {field: object.email, op: domain_in_list, value: disposable-email-domains}
  tests:
    - {name: unverified at example.com, expect: fires, events: [{type: user.created, data: {object:
        {user_id: "auth0|1", email: jane@example.com, email_verified: false}}}]}
    - {name: verified at mailinator.com, expect: fires, events: [{type: user.created, data: {object:
        {user_id: "auth0|2", email: joe@mailinator.com, email_verified: true}}}]}
    - {name: verified at example.com, expect: quiet, events: [{type: user.created, data: {object:
        {user_id: "auth0|3", email: ann@example.com, email_verified: true}}}]}
"""


def test_own_rules_with_alternatives_fire_on_either(tmp_path):
    path = tmp_path / "either.yml"
    path.write_text(EITHER)
    done = rules(tmp_path, str(path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert [line.split(" (")[0] for line in done.stdout.splitlines()] == [
        "ok   unverified-or-throwaway: unverified at example.com",
        "ok   unverified-or-throwaway: verified at mailinator.com",
        "ok   unverified-or-throwaway: verified at example.com",
    ]


def test_an_unknown_rule_is_named(tmp_path):
    done = rules(tmp_path, "no-such-rule")
    assert done.returncode == 3 and "no alert rule 'no-such-rule'" in done.stderr
