"""Imported Sigma rules run as ordinary rules over a real store: a temporal_ordered correlation fires on the
grant-then-removal of the same member within the timespan and not otherwise; an event_count correlation counts
per group; a detection rule's `not` filter holds; and "Test against history" tries an imported rule."""

from __future__ import annotations

import textwrap

import pytest

from helpers.alert_events import BASE, clock_at, event
from helpers.sigma_samples import ELEVATION
from tenant_events.alert_settings import WorkingHours
from tenant_events.alerts import BUILTIN_RULES, Evaluator, RuleEngine, load_rules
from tenant_events.alerts.history import try_rule
from tenant_events.alerts.sigma_rules import read_sigma
from tenant_events.store import AlertInbox, Batch, StoreWriter

AROUND_THE_CLOCK = WorkingHours(start="00:00", end="00:00", timezone="UTC")
SIGMA = (
    ELEVATION
    + "---"
    + textwrap.dedent("""
    title: Members removed
    name: removed-members
    logsource: {product: auth0, service: events}
    detection:
      s: {type: organization.member.deleted}
      condition: s
    ---
    title: Many members removed from one organization
    name: org-emptied
    level: high
    correlation:
      type: event_count
      rules: [removed-members]
      group-by: [data.object.organization.id]
      timespan: 1m
      condition: {gte: 3}
    ---
    title: A role other than viewer granted
    name: not-viewer
    level: low
    logsource: {product: auth0, service: events}
    detection:
      s: {type: group.role.assigned}
      viewer: {data.object.role.name: viewer}
      condition: s and not viewer
""")
)
ORG_A, ORG_B = "org_" + "A" * 16, "org_" + "B" * 16


@pytest.fixture
def imported(tmp_path):
    (tmp_path / "rules.yml").write_text(SIGMA)
    ruleset = load_rules([f.entry for f in read_sigma(tmp_path / "rules.yml")], BUILTIN_RULES)
    assert ruleset.errors == ()
    return [r for r in ruleset.rules if r.origin == "sigma"]


@pytest.fixture
def store(tmp_path, imported):
    writer = StoreWriter(tmp_path / "demo.sqlite3")
    clock = clock_at(0)
    evaluator = Evaluator(RuleEngine(imported, hours=AROUND_THE_CLOCK, profile="demo", clock=clock))
    n = [0]

    def arrive(rows):
        n[0] += 1
        clock.now[0] = max(r.received_at for r in rows) + 1
        writer.commit_sync(Batch(events=list(rows), cursor=f"c{n[0]}"))
        return [a.rule_id for a in writer.run_alert_job(evaluator.step).result().raised]

    yield arrive
    writer.close()


def test_temporal_ordered_fires_for_the_same_member_in_order_within_the_timespan(store):
    grant, remove = "organization.member.role.assigned", "organization.member.role.deleted"
    assert store([event(grant, 0, role="Org Admin", user="auth0|ada")]) == []
    assert store([event(remove, 10, role="Org Admin", user="auth0|bob")]) == []  # another member
    assert store([event(remove, 20, role="viewer", user="auth0|ada")]) == []  # not an admin role
    assert store([event(remove, 3000, role="Org Admin", user="auth0|ada")]) == ["quick-elevation"]
    # removal first, then the grant: not this sequence
    assert store([event(remove, 4000, role="Org Admin", user="auth0|cy")]) == []
    assert store([event(grant, 4010, role="Org Admin", user="auth0|cy")]) == []
    # 60 minutes apart is outside the timespan
    assert store([event(remove, 4010 + 3600, role="Org Admin", user="auth0|cy")]) == []


def test_event_count_counts_per_group_and_a_not_filter_holds(store):
    assert (
        store([event("organization.member.deleted", i, org=ORG_A if i % 2 else ORG_B) for i in range(4)])
        == []
    )
    assert store([event("organization.member.deleted", 5, org=ORG_A)]) == ["org-emptied"]
    assert store([event("group.role.assigned", 6, role="viewer")]) == []
    assert store([event("group.role.assigned", 7, role="editor")]) == ["not-viewer"]


def test_an_imported_rule_can_be_tried_on_stored_history(tmp_path, imported):
    writer = StoreWriter(tmp_path / "history.sqlite3")
    try:
        rows = [event("organization.member.deleted", i, org=ORG_A) for i in range(3)]
        rows += [event("organization.member.deleted", 600 + i * 30, org=ORG_B) for i in range(3)]
        writer.commit_sync(Batch(events=rows, cursor="c1"))
    finally:
        writer.close()
    rule = next(r for r in imported if r.id == "org-emptied")
    with AlertInbox(tmp_path / "history.sqlite3") as inbox:
        trial = try_rule(inbox, rule, hours=AROUND_THE_CLOCK, profile="demo", now=BASE.timestamp() + 3600)
    assert trial.firings == 1 and trial.sentence().startswith("would have fired once")
