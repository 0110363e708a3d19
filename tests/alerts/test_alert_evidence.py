"""An alert holds the events that made it fire, firing by firing, never the routine traffic after them; a new
firing within the rule's `coalesce_minutes` of the raise is a new version of the alert, said again, and later a
new alert; what an alert says is its latest firing's own evidence. (Seen in use: a second mass deletion 11
minutes after the first was folded into the first alert and never notified, "20 users deleted in 52 s" described
30 deletions made in 20 s and grew to "48 users deleted in 2 min" with routine deletions after the incident,
and the sign-up burst alert grew to 467 routine sign-ups "in 11 min".)"""

from __future__ import annotations

from datetime import UTC

import pytest

from helpers.alert_events import BASE, clock_at, event
from tenant_events.alert_settings import WorkingHours
from tenant_events.alerts import BUILTIN_RULES, Evaluator, RuleEngine, load_rules
from tenant_events.alerts.delivery import NotificationPlanner, QuietTimes
from tenant_events.alerts.presentation import why
from tenant_events.settings import NotificationSettings
from tenant_events.store import AlertInbox, Batch, StoreWriter

OFFICE = WorkingHours(start="00:00", end="00:00", timezone="UTC")  # around the clock: no off-hours alerts


class Live:
    """A store, an evaluator and a notification planner, each batch evaluated as it arrives (live)."""

    def __init__(self, path, entries=()):
        self.writer = StoreWriter(path)
        self.path = path
        self.clock = clock_at(0)
        rules = load_rules(list(entries), BUILTIN_RULES).rules
        self.evaluator = Evaluator(RuleEngine(rules, hours=OFFICE, profile="demo", clock=self.clock))
        self.planner = NotificationPlanner(QuietTimes(NotificationSettings(), UTC), clock=self.clock)
        self.n = 0
        self.notified: list[str] = []

    def arrive(self, rows):
        """Commit rows and evaluate them at their newest event's time."""
        self.n += 1
        self.clock.now[0] = max(BASE.timestamp() + 1, max(r.received_at for r in rows) + 1)
        self.writer.commit_sync(Batch(events=list(rows), cursor=f"c{self.n}"))
        result = self.writer.run_alert_job(self.evaluator.step).result()
        self.notified += [n.title for n in self.planner.offer(result)]
        return result

    def alerts(self, rule):
        with AlertInbox(self.path) as inbox:
            return sorted((a for a in inbox.alerts() if a.rule_id == rule), key=lambda a: a.id)


@pytest.fixture
def live(tmp_path):
    s = Live(tmp_path / "demo.sqlite3")
    yield s
    s.writer.close()


def per_second(live, type_, start, count, every):
    """`count` events of `type_` from `start` s on, `every` s apart, each arriving as it happens."""
    for i in range(count):
        live.arrive([event(type_, start + i * every)])


def test_a_second_mass_deletion_eleven_minutes_later_is_the_alerts_second_version_and_notifies(live):
    per_second(live, "user.deleted", 0, 20, 2.9)  # 20 users in 55.1 s
    [first] = live.alerts("mass-deletion")
    assert (first.occurrences, first.event_count) == (1, 20)
    assert why(first) == "20 users deleted in 55 s"  # its own evidence, said as a person would
    per_second(live, "group.deleted", 11 * 60, 30, 1.5)  # 30 groups, 11 minutes later
    [alert] = live.alerts("mass-deletion")
    assert (alert.id, alert.occurrences, alert.event_count) == (first.id, 2, 50)
    assert live.notified == ["Mass deletion", "Mass deletion × 2"]  # each firing said
    # said in the terms of the firing that made version 2, not of everything the alert holds
    assert why(alert) == "30 groups deleted in 44 s; its 2nd firing, 50 events in all"
    # past `coalesce_minutes` (30) after the raise, a firing is an alert of its own
    per_second(live, "user.deleted", 31 * 60, 20, 1.0)
    old, new = live.alerts("mass-deletion")
    assert old.occurrences == 2 and (new.occurrences, new.event_count) == (1, 20)
    assert live.notified[-1] == "Mass deletion"


def test_a_mass_deletion_amid_routine_deletions_is_said_as_the_incident_it_was(live):
    per_second(live, "user.deleted", 0, 10, 8.6)  # routine: about 7 a minute …
    per_second(live, "user.deleted", 86, 30, 0.67)  # … then 30 in 20 s …
    per_second(live, "user.deleted", 107, 14, 8.6)  # … then routine again for two minutes
    [alert] = live.alerts("mass-deletion")
    # the window that crossed (a few routine deletions still in its minute), then the incident's own rate: of
    # the routine deletions after it at most the one right at its heels (1.6 s after its last)
    assert alert.occurrences == 1 and alert.last_time_ms <= int((BASE.timestamp() + 107) * 1000)
    assert 30 <= alert.event_count <= 38, alert.event_count


def test_routine_deletions_after_a_mass_deletion_are_not_part_of_it(live):
    per_second(live, "user.deleted", 0, 20, 2.9)
    per_second(live, "user.deleted", 60, 87, 8.6)  # right after it, ~7 a minute for 12 minutes: routine
    [alert] = live.alerts("mass-deletion")
    # at most the one deletion whose own minute still held 20 joins; the other 86 do not
    assert alert.event_count <= 21 and alert.last_time_ms <= int((BASE.timestamp() + 61) * 1000)


def test_routine_sign_ups_after_a_burst_do_not_grow_it(live):
    per_second(live, "user.created", 0, 60, 0.95)  # 60 in 56 s: a burst
    per_second(live, "user.created", 60, 400, 1.6)  # then ~37 a minute for 11 minutes, under the threshold
    [alert] = live.alerts("signup-burst")
    assert 60 <= alert.event_count < 100, alert.event_count  # the window that crossed, not 467 events
    assert live.notified.count("Burst of sign-ups") == 1


def test_a_critical_grant_folded_into_the_open_alert_notifies_again(live):
    live.arrive([event("group.role.assigned", 0, role="admin")])
    live.arrive([event("group.role.assigned", 120, role="owner")])
    [alert] = live.alerts("admin-role")
    assert alert.occurrences == 2 and live.notified == ["Admin role assigned", "Admin role assigned × 2"]
