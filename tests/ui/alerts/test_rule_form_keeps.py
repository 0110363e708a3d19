"""The rule form edits what it shows and keeps the rest: an imported Sigma rule edited in the form keeps its
ATT&CK tags, its explanation and `include_test_events` (seen in use: the form rebuilt a rule from a hand-kept
list of fields and dropped all three). It also shows and edits the alert's life: resolve after N minutes
without a firing, and whether a warning notifies again at each firing."""

from __future__ import annotations

import pytest

from tenant_events.alerts import BUILTIN_RULES
from tenant_events.alerts.sigma_rules.reader import read_sigma
from tenant_events.ui.alerts.rule_form import RuleForm

pytestmark = [pytest.mark.gui]

TAGGED = """title: Admin role to a service account
name: svc-admin
description: An admin-like role given to a service account, which then acts with no person behind it.
level: high
tags: [attack.t1098.003, attack.privilege_escalation, attack.t1078.004]
logsource: {product: auth0, service: events}
detection:
  s:
    type: organization.member.role.assigned
    data.object.role.name|contains: admin
  condition: s
tenant_events:
  include_test_events: true
"""


def test_a_sigma_rule_edited_in_the_form_keeps_its_attack_tags_and_the_rest(qtbot, tmp_path):
    (tmp_path / "svc.yml").write_text(TAGGED)
    [imported] = read_sigma(tmp_path / "svc.yml")
    rule = imported.rule
    assert rule.mitre == ["T1098.003", "T1078.004"] and rule.include_test_events and rule.explanation
    form = RuleForm()
    qtbot.addWidget(form)
    form.load(rule, None)
    form.name.setText("Admin role to a service account (reviewed)")
    form.severity.setCurrentIndex(2)  # critical
    form.resolve_after.setValue(45)
    form.renotify.setChecked(False)
    edited, errors = form.validate(rule.id, True, BUILTIN_RULES)
    assert errors == [] and edited is not None
    assert edited.name == "Admin role to a service account (reviewed)" and edited.severity == "critical"
    assert edited.mitre == rule.mitre  # kept, though the form has no field for them
    assert edited.explanation == rule.explanation and edited.include_test_events and edited.origin == "sigma"
    assert (edited.resolve_after_minutes, edited.renotify) == (45, False)
    # everything the form does not show is as it was
    shown = {"name", "severity", "resolve_after_minutes", "renotify"}
    assert edited.model_dump(exclude=shown) == rule.model_dump(exclude=shown)


def test_a_rule_left_at_its_kinds_resolve_default_stays_at_it(qtbot):
    """Loading and saving a threshold rule unchanged writes no explicit resolve time: it keeps following the
    default for its kind (30 minutes for threshold and grouping rules)."""
    mass = next(r for r in BUILTIN_RULES if r.id == "mass-deletion")
    form = RuleForm()
    qtbot.addWidget(form)
    form.load(mass, mass)
    assert form.resolve_after.value() == 30
    entry, _ = form.entry(mass.id, True)
    assert entry.get("resolve_after_minutes") is None
    again, errors = form.validate(mass.id, True, BUILTIN_RULES)
    assert errors == [] and again == mass  # the fixtures, the MITRE ids, all of it


def test_exceptions_are_edited_one_a_line_and_a_bad_line_is_named_under_the_field(qtbot):
    mass = next(r for r in BUILTIN_RULES if r.id == "mass-deletion-by-actor")
    form = RuleForm()
    qtbot.addWidget(form)
    form.load(mass, mass)
    assert form.excepts.toPlainText() == "" and not form.excepts.isReadOnly()
    form.excepts.setPlainText(
        "context.client.id equals cli_HRIMPORT, cli_HRSYNC\n"
        "context.request.ip cidr 10.0.0.0/8 and context.client.name starts_with Backoffice"
    )
    rule, errors = form.validate(mass.id, True, BUILTIN_RULES)
    assert errors == [] and rule is not None
    assert [[c.op for c in e.conditions] for e in rule.except_] == [["equals"], ["cidr", "starts_with"]]
    assert rule.except_[0].conditions[0].value == ["cli_HRIMPORT", "cli_HRSYNC"]
    form.load(rule, mass)  # shown again as the same lines
    assert form.excepts.toPlainText().splitlines()[1] == (
        "context.request.ip cidr 10.0.0.0/8 and context.client.name starts_with Backoffice"
    )
    form.excepts.setPlainText("context.client.id is HR Import")
    rule, errors = form.validate(mass.id, True, BUILTIN_RULES)
    assert rule is None and not form.errors["except"].isHidden()
    assert form.errors["except"].text().startswith("line 1: write “field operator value”")
    form.excepts.setPlainText("object.nothing equals x")
    rule, errors = form.validate(mass.id, True, BUILTIN_RULES)
    assert rule is None and "except.0.conditions.0.field" in form.errors["except"].text()
