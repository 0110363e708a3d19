"""An alert's life (values/alert_lifecycle.py) over a real store: a firing folds into the open alert as a new
version only within `coalesce_minutes` of the raise, an alert resolves by triage or by going quiet (each resolve
queued for the destinations), a later firing then raises a new alert, and a grouped rule's catch-up keeps one
named alert per group. (Seen in use: a trickle of grants kept "Admin role assigned × 7" open for 12 minutes,
alerts were never resolved, and a catch-up held three clients' deletions in one "Mass deletion by one actor".)"""

from __future__ import annotations

import pytest

from helpers.alert_events import BASE, clock_at, event
from tenant_events.alert_settings import WorkingHours
from tenant_events.alerts import BUILTIN_RULES, Evaluator, RuleEngine, load_rules
from tenant_events.alerts.delivery import NotificationPlanner, QuietTimes
from tenant_events.alerts.presentation import title
from tenant_events.settings import NotificationSettings
from tenant_events.store import AlertInbox, Batch, StoreWriter
from tenant_events.store.alert_triage import AlertTriage
from tenant_events.store.schema import connect
from tenant_events.values.alert_lifecycle import (
    NotAllowed,
    OpenFacts,
    Phase,
    after,
    folds,
    phase_of,
    quiet_resolve_due,
    repeat_due,
)

OFFICE = WorkingHours(start="00:00", end="00:00", timezone="UTC")  # around the clock: no off-hours alerts


class Live:
    """A store and an evaluator whose clock the test moves; each commit evaluated as it arrives."""

    def __init__(self, path, entries=()):
        self.path = path
        self.writer = StoreWriter(path)
        self.clock = clock_at(0)
        rules = load_rules(list(entries), BUILTIN_RULES).rules
        self.evaluator = Evaluator(
            RuleEngine(rules, hours=OFFICE, profile="demo", catch_up_after_s=300, clock=self.clock)
        )
        self.n = 0

    def at(self, seconds):
        self.clock.now[0] = BASE.timestamp() + seconds

    def arrive(self, rows, at=None):
        self.n += 1
        self.at(at if at is not None else max(r.received_at for r in rows) - BASE.timestamp() + 1)
        self.writer.commit_sync(Batch(events=list(rows), cursor=f"c{self.n}"))
        return self.step()

    def step(self):
        return self.writer.run_alert_job(self.evaluator.step).result()

    def alerts(self, rule=None):
        with AlertInbox(self.path) as inbox:
            found = sorted(inbox.alerts(limit=10_000), key=lambda a: a.id)
        return [a for a in found if rule is None or a.rule_id == rule]

    def outbox(self):
        conn = connect(self.path, readonly=True)
        try:
            return conn.execute(
                "SELECT alert_id, kind, version FROM alert_outbox ORDER BY alert_id, version, kind"
            ).fetchall()
        finally:
            conn.close()


@pytest.fixture
def live(tmp_path):
    s = Live(tmp_path / "demo.sqlite3")
    yield s
    s.writer.close()


def test_the_state_machine_says_what_each_phase_may_become():
    assert after(Phase.FIRING, "refire") is Phase.FIRING
    assert after(Phase.ACKNOWLEDGED, "refire") is Phase.ACKNOWLEDGED  # said again, still in someone's hands
    assert after(Phase.FIRING, "resolve") is Phase.RESOLVED
    assert after(Phase.RESOLVED, "reopen") is Phase.FIRING
    with pytest.raises(NotAllowed):
        after(Phase.RESOLVED, "refire")  # a later firing is a new alert
    assert (
        phase_of("snoozed", 100.0, 99.0) is Phase.SNOOZED
        and phase_of("snoozed", 100.0, 100.0) is Phase.FIRING
    )
    assert phase_of(None, None, 0) is Phase.FIRING and phase_of("open", None, 0) is Phase.FIRING
    assert quiet_resolve_due(Phase.FIRING, 0.0, 60.0, 60.0) and not quiet_resolve_due(
        Phase.FIRING, 0.0, 0.0, 1e9
    )
    assert repeat_due(Phase.FIRING, "critical", 0.0, 60.0, 60.0)
    assert not repeat_due(Phase.ACKNOWLEDGED, "critical", 0.0, 60.0, 600.0)
    assert not repeat_due(Phase.FIRING, "warning", 0.0, 60.0, 600.0)
    live_alert = OpenFacts(resolved=False, catch_up=False, raised_ms=0, last_fired_ms=540_000, updated_at=0.0)
    options = {
        "catch_up": False,
        "now": 0.0,
        "coalesce_ms": 600_000,
        "resolve_after_ms": 0,
        "catch_up_s": 300,
    }
    assert folds(live_alert, 599_999, **options)
    assert not folds(live_alert, 600_000, **options)  # bound from the raise, not from the last firing


def test_a_trickle_of_grants_is_bounded_by_the_raise_not_rolled_forward(live):
    for minute in (0, 4, 8, 12, 16):  # a grant every 4 minutes; coalesce_minutes is 10
        live.arrive([event("group.role.assigned", minute * 60, role="admin")])
    first, second = live.alerts("admin-role")
    assert (first.occurrences, second.occurrences) == (3, 2)  # 0, 4, 8 … then 12, 16: a new alert
    assert [title(a) for a in (first, second)] == ["Admin role assigned × 3", "Admin role assigned × 2"]
    # each firing is a version with its own delivery
    assert [(k, v) for a, k, v in live.outbox() if a == first.id] == [
        ("firing", 1),
        ("firing", 2),
        ("firing", 3),
    ]


def test_an_alert_resolves_after_going_quiet_and_a_later_firing_is_a_new_alert(live):
    quick = [{"id": "mass-deletion", "resolve_after_minutes": 5}]
    live.evaluator = Evaluator(
        RuleEngine(
            load_rules(quick, BUILTIN_RULES).rules,
            hours=OFFICE,
            profile="demo",
            catch_up_after_s=300,
            clock=live.clock,
        )
    )
    live.arrive([event("user.deleted", i) for i in range(25)])
    [alert] = live.alerts("mass-deletion")
    live.at(4 * 60)
    assert live.step().settled == []  # not quiet long enough
    live.at(6 * 60)
    result = live.step()  # no commit: the clock alone resolves it
    assert [(a.id, a.phase(BASE.timestamp() + 360)) for a in result.settled] == [(alert.id, Phase.RESOLVED)]
    assert (alert.id, "resolved", 1) in live.outbox()  # said to the destinations that want it
    with AlertTriage(live.path) as triage:
        [entry] = triage.history(alert.id)
    assert (entry.state, entry.by, entry.note) == ("resolved", "Tenant Events", "no firing for 5 min")
    live.arrive([event("user.deleted", 400 + i) for i in range(25)])  # within coalesce_minutes (30) …
    old, new = live.alerts("mass-deletion")  # … but resolved: a new alert
    assert old.id == alert.id and old.occurrences == 1 and new.occurrences == 1


def test_a_resolve_by_triage_elsewhere_reaches_the_next_step_and_ends_the_alert(live):
    live.arrive([event("group.role.assigned", 0, role="admin")])
    [alert] = live.alerts("admin-role")
    with AlertTriage(live.path) as triage:  # `tenant-events triage resolve`, another process
        triage.set(alert.id, "resolved", "ana", "expected")
    result = live.step()
    assert [a.id for a in result.settled] == [alert.id] and result.settled[0].triage == "resolved"
    assert (alert.id, "resolved", 1) in live.outbox()
    live.arrive(
        [event("group.role.assigned", 60, role="owner")]
    )  # within coalesce_minutes: a new alert all the same
    assert [a.occurrences for a in live.alerts("admin-role")] == [1, 1]
    # acknowledging is no resolve: a firing still folds into the acknowledged alert, as its next version
    [_, second] = live.alerts("admin-role")
    with AlertTriage(live.path) as triage:
        triage.set(second.id, "acknowledged", "ana")
    live.arrive([event("group.role.assigned", 120, role="owner")])
    latest = live.alerts("admin-role")[-1]
    assert (latest.id, latest.occurrences, latest.phase(BASE.timestamp() + 121)) == (
        second.id,
        2,
        Phase.ACKNOWLEDGED,
    )


def test_a_catch_up_with_three_acting_clients_raises_three_named_alerts(live):
    clients = [("cli_backoffice", "Backoffice Script"), ("cli_hr", "HR Sync"), ("cli_cleanup", "Cleanup Job")]
    rows = [
        event("user.deleted", c * 120 + i * 5, client=client)
        for c, client in enumerate(clients)
        for i in range(12)
    ]
    result = live.arrive(sorted(rows, key=lambda r: r.time_ms), at=3 * 3600)  # hours later: a catch-up
    named = sorted(a.rule_name for a in result.raised if a.rule_id == "mass-deletion-by-actor")
    assert named == [
        "Mass deletion by one actor · client Backoffice Script",
        "Mass deletion by one actor · client Cleanup Job",
        "Mass deletion by one actor · client HR Sync",
    ]
    assert all(
        a.catch_up and a.event_count == 12 for a in result.raised if a.rule_id == "mass-deletion-by-actor"
    )
    planner = NotificationPlanner(QuietTimes(NotificationSettings()), hold_s=0, clock=live.clock)
    planner.offer(result)
    summary = planner.summary()
    assert summary is not None and "mass deletion by one actor × 3 (3 groups)" in summary.why


def test_a_grouped_rule_live_keeps_one_named_alert_per_group_and_versions_each_on_its_own(live):
    """Live, as in a catch-up: two clients deleting at once are two alerts, each named by its client; the first
    client's second burst minutes later is its alert's version 2 (queued for the destinations as such), and the
    other client's alert stays at version 1."""
    backoffice, hr = ("cli_backoffice", "Backoffice Script"), ("cli_hr", "HR Sync")
    both = [event("user.deleted", i * 5, client=c) for i in range(12) for c in (backoffice, hr)]
    first = live.arrive(both)
    named = sorted(a.rule_name for a in first.raised if a.rule_id == "mass-deletion-by-actor")
    assert named == [
        "Mass deletion by one actor · client Backoffice Script",
        "Mass deletion by one actor · client HR Sync",
    ]
    assert not any(a.catch_up for a in first.raised)
    live.arrive([event("user.deleted", 240 + i * 5, client=backoffice) for i in range(12)])
    by_name = {a.rule_name: a for a in live.alerts("mass-deletion-by-actor")}
    assert len(by_name) == 2
    again = by_name["Mass deletion by one actor · client Backoffice Script"]
    other = by_name["Mass deletion by one actor · client HR Sync"]
    assert (again.version, other.version) == (2, 1)
    queued = [(k, v) for a, k, v in live.outbox() if a == again.id]
    assert queued == [("firing", 1), ("firing", 2)]
    assert [(k, v) for a, k, v in live.outbox() if a == other.id] == [("firing", 1)]


def test_no_built_in_rule_opens_a_second_alert_while_its_first_is_open():
    """A threshold or grouping rule's alert resolves after going quiet: its firings fold for at least that long
    from the raise. (Seen in use: a client's second burst of deletions 12 minutes after its first opened a second
    "Mass deletion by one actor · client Backoffice Script" beside the first, both firing, while "Mass deletion"
    took the same burst in as its version 2.)"""
    for rule in BUILTIN_RULES:
        if rule.resolve_after_s:
            assert rule.coalesce_minutes * 60 >= rule.resolve_after_s, rule.id


def test_a_clients_second_burst_twelve_minutes_later_is_its_alerts_version_2(live):
    backoffice = ("cli_backoffice", "Backoffice Script")
    live.arrive([event("user.deleted", i * 5, client=backoffice) for i in range(12)])
    live.arrive([event("user.deleted", 720 + i * 5, client=backoffice) for i in range(12)])
    [alert] = live.alerts("mass-deletion-by-actor")
    assert alert.version == 2 and alert.rule_name == "Mass deletion by one actor · client Backoffice Script"
