"""Notification decisions: urgency from severity, each live firing said (a version folded into an open alert
too), repeats of an unacknowledged critical alert, a catch-up as one summary, do-not-disturb and quiet hours
with the time they end, critical alerts passing DND."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

from tenant_events.alerts.delivery import NotificationPlanner, QuietTimes, urgency_for
from tenant_events.alerts.evaluator import StepResult
from tenant_events.settings import NotificationSettings
from tenant_events.values.alerts import StoredAlert


def alert(
    i,
    rule="admin-role",
    name="Admin role assigned",
    severity="critical",
    catch_up=False,
    occurrences=1,
    notify=True,
):
    return StoredAlert(
        id=i,
        rule_id=rule,
        rule_name=name,
        severity=severity,
        tenant="demo-tenant",
        catch_up=catch_up,
        notify=notify,
        occurrences=occurrences,
        event_count=occurrences,
        first_seq=1,
        last_seq=2,
        first_event_id="evt_a",
        last_event_id="evt_b",
        first_time="2026-11-04T12:00:00.000Z",
        last_time="2026-11-04T12:00:30.000Z",
        last_time_ms=0,
        type_counts={"group.role.assigned": occurrences},
        detail="Role admin assigned to group eng",
        raised_at=0.0,
        updated_at=0.0,
        read_at=None,
    )


def at(text):
    return datetime.fromisoformat(text).timestamp()


def test_urgency_follows_severity():
    assert [urgency_for(s) for s in ("info", "warning", "critical")] == ["low", "normal", "critical"]


def test_live_alerts_notify_once_and_folds_do_not():
    now = [at("2026-11-04T12:00:00+00:00")]
    planner = NotificationPlanner(QuietTimes(NotificationSettings(), UTC), clock=lambda: now[0])
    out = planner.offer(
        StepResult(raised=[alert(1), alert(2, "org-deleted", "Organization deleted", "warning")])
    )
    assert [(n.title, n.urgency, n.alert_ids) for n in out] == [
        ("Admin role assigned", "critical", (1,)),
        ("Organization deleted", "normal", (2,)),
    ]
    assert out[0].text("demo-tenant") == "Role admin assigned to group eng\ndemo-tenant"
    assert (
        planner.offer(StepResult(updated=[alert(1, occurrences=4)])) == []
    )  # the burst goes on: no new popup
    assert planner.offer(StepResult(raised=[alert(3, notify=False)])) == []  # an inbox-only rule


def test_a_catch_up_becomes_one_summary_after_it_went_quiet():
    now = [at("2026-11-04T12:00:00+00:00")]
    planner = NotificationPlanner(QuietTimes(NotificationSettings(), UTC), hold_s=10, clock=lambda: now[0])
    mass = alert(1, "mass-deletion", "Mass deletion", catch_up=True)
    grants = alert(2, catch_up=True, occurrences=3)
    assert planner.offer(StepResult(raised=[mass, grants])) == []
    now[0] += 5
    planner.offer(
        StepResult(
            updated=[
                alert(1, "mass-deletion", "Mass deletion", catch_up=True, occurrences=2),
                alert(2, catch_up=True, occurrences=5),
            ]
        )
    )
    assert planner.summary() is None and planner.summary_due() == now[0] + 10
    now[0] += 10
    summary = planner.summary()
    assert (summary.title, summary.urgency, summary.alert_ids, summary.summary) == (
        "While you were away",
        "critical",
        (1, 2),
        True,
    )
    assert summary.why == "mass deletion × 2, admin role assigned × 5"  # the title says "While you were away"
    assert planner.summary() is None  # handed out once


def test_do_not_disturb_on_or_until_a_time():
    noon = at("2026-11-04T12:00:00+00:00")
    quiet = QuietTimes(NotificationSettings(do_not_disturb=True), UTC)
    assert quiet.state(noon).text(UTC) == "Do not disturb" and not quiet.allows("critical", noon)
    timed = QuietTimes(NotificationSettings(do_not_disturb_until=noon + 5400), UTC)
    assert timed.state(noon).text(UTC) == "Do not disturb until 13:30"
    assert not timed.state(noon + 5400).muted and timed.allows("info", noon + 5400)


def test_quiet_hours_span_midnight_on_their_days_and_say_when_they_end():
    settings = NotificationSettings(quiet_hours=("22:00", "07:00"), quiet_days=["fri", "sat"])
    quiet = QuietTimes(settings, UTC)
    assert not quiet.state(at("2026-11-06T21:59:00+00:00")).muted  # Friday evening, before
    fri_night = quiet.state(at("2026-11-06T23:30:00+00:00"))
    assert fri_night.text(UTC) == "Quiet hours until 07:00" and fri_night.until == at(
        "2026-11-07T07:00:00+00:00"
    )
    assert quiet.state(at("2026-11-07T06:59:00+00:00")).muted  # Saturday morning: Friday's night
    assert not quiet.state(at("2026-11-05T23:30:00+00:00")).muted  # Thursday night: not a quiet day
    assert not quiet.state(at("2026-11-06T06:30:00+00:00")).muted  # Friday morning belongs to Thursday


def test_critical_alerts_pass_when_the_user_allows_it():
    night = at("2026-11-06T23:30:00+00:00")
    strict = NotificationPlanner(
        QuietTimes(NotificationSettings(quiet_hours=("22:00", "07:00")), UTC), clock=lambda: night
    )
    assert strict.offer(StepResult(raised=[alert(1)])) == []
    lenient = NotificationPlanner(
        QuietTimes(NotificationSettings(quiet_hours=("22:00", "07:00"), critical_passes_dnd=True), UTC),
        clock=lambda: night,
    )
    warning = alert(2, "org-deleted", "Organization deleted", "warning")
    assert [n.alert_ids for n in lenient.offer(StepResult(raised=[alert(1), warning]))] == [(1,)]


def test_each_firing_folded_into_an_open_alert_notifies_again_unless_the_rule_says_not_to():
    now = [at("2026-11-04T12:00:00+00:00")]
    quiet_rules = {"org-deleted"}  # the user turned re-notification off for this rule
    planner = NotificationPlanner(
        QuietTimes(NotificationSettings(), UTC), clock=lambda: now[0], renotify=lambda r: r not in quiet_rules
    )
    planner.offer(StepResult(raised=[alert(1)]))
    now[0] += 60  # (a firing within 5 s of the rule's last notification waits to be said with the flood)
    [again] = planner.offer(StepResult(updated=[alert(1, occurrences=2)], refired={1}))
    assert (again.title, again.urgency, again.alert_ids) == ("Admin role assigned × 2", "critical", (1,))
    # a warning re-firing: a different user, minutes later, is news too
    warning = alert(2, "admin-group-member", "Member added to an admin group", "warning", occurrences=2)
    [said] = planner.offer(StepResult(updated=[warning], refired={2}))
    assert (said.title, said.urgency) == ("Member added to an admin group × 2", "normal")
    # … unless the rule says not to (a critical one always does), and an info alert says itself once only
    off = alert(3, "org-deleted", "Organization deleted", "warning", occurrences=2)
    info = alert(4, "off-hours", "Changes outside working hours", "info", occurrences=2)
    assert planner.offer(StepResult(updated=[off, info], refired={3, 4})) == []
    # more events of the same firing (a burst going on) are not a new version: no popup
    assert planner.offer(StepResult(updated=[alert(1, occurrences=2)])) == []


def test_an_unacknowledged_critical_alert_is_said_again_until_someone_takes_it_in_hand():
    now = [at("2026-11-04T12:00:00+00:00")]
    planner = NotificationPlanner(QuietTimes(NotificationSettings(), UTC), clock=lambda: now[0], repeat_s=60)
    planner.offer(StepResult(raised=[alert(1), alert(2, "org-deleted", "Organization deleted", "warning")]))
    assert planner.repeats() == [] and planner.next_repeat() == now[0] + 60  # only the critical one repeats
    now[0] += 60
    [repeat] = planner.repeats()
    assert (repeat.title, repeat.alert_ids) == ("Still firing: Admin role assigned", (1,))
    assert planner.repeats() == []  # said again just now
    # snoozed for 90 s (by anyone): no repeat while it lasts, one when it has ended and the alert still fires
    snoozed = dataclasses.replace(alert(1), triage="snoozed", snoozed_until=now[0] + 90)
    planner.offer(StepResult(settled=[snoozed]))
    now[0] += 60
    assert (
        planner.repeats(lambda i: snoozed if i == 1 else None) == [] and planner.next_repeat() == now[0] + 30
    )
    now[0] += 30
    [after] = planner.repeats(lambda i: snoozed if i == 1 else None)
    assert after.title == "Still firing: Admin role assigned"
    now[0] += 60
    acknowledged = dataclasses.replace(alert(1), triage="acknowledged")
    planner.offer(StepResult(settled=[acknowledged]))
    assert planner.repeats() == [] and planner.next_repeat() is None


def test_a_silenced_alert_is_never_said_nor_repeated_nor_summed_up():
    now = [at("2026-11-04T12:00:00+00:00")]
    hushed: set[str] = {"admin-role"}
    planner = NotificationPlanner(
        QuietTimes(NotificationSettings(), UTC),
        hold_s=10,
        clock=lambda: now[0],
        repeat_s=60,
        silenced=lambda a: a.rule_id in hushed,
    )
    assert planner.offer(StepResult(raised=[alert(1)])) == []
    assert planner.offer(StepResult(updated=[alert(1, occurrences=2)], refired={1})) == []
    said = planner.offer(StepResult(raised=[alert(2, "mass-deletion", "Mass deletion")]))
    assert [n.alert_ids for n in said] == [(2,)]
    hushed.add("mass-deletion")  # silenced after it was said: no "Still firing" either
    now[0] += 120
    assert planner.repeats() == []
    assert planner.offer(StepResult(raised=[alert(3, catch_up=True)])) == []
    now[0] += 11
    assert planner.summary() is None  # a catch-up of silenced alerts alone says nothing
    hushed.clear()  # the silence ended: the next firing is said again
    said = planner.offer(StepResult(updated=[alert(1, occurrences=3)], refired={1}))
    assert [n.alert_ids for n in said] == [(1,)]


def grouped(i, org, rule="org-connection", name="Organization connection changed", severity="warning"):
    return dataclasses.replace(
        alert(i, rule, f"{name} · organization {org}", severity), group_key=f"org_{org}"
    )


def test_a_flood_of_one_rule_is_one_notification_and_the_next_within_5_s_waits_for_one_more():
    now = [at("2026-11-04T12:00:00+00:00")]
    planner = NotificationPlanner(QuietTimes(NotificationSettings(), UTC), clock=lambda: now[0])
    orgs = ["Acme", "Umbrella", "Globex", "Initech", "Hooli", "Stark", "Wayne", "Tyrell"]
    out = planner.offer(StepResult(raised=[*(grouped(i, o) for i, o in enumerate(orgs, 1)), alert(9)]))
    assert [(n.title, n.urgency) for n in out] == [
        ("Organization connection changed · 8 organizations", "normal"),
        ("Admin role assigned", "critical"),  # another rule: said on its own
    ]
    assert out[0].alert_ids == tuple(range(1, 9))
    assert out[0].why == "\n".join(["Role admin assigned to group eng"] * 3 + ["… and 5 more"])
    now[0] += 2  # two more within 5 s of the rule's last notification: held, then said as one
    assert planner.offer(StepResult(raised=[grouped(10, "Cyberdyne"), grouped(11, "Soylent")])) == []
    assert planner.fold_due() == now[0] + 3
    assert planner.folded() == []
    now[0] += 3
    [late] = planner.folded()
    assert late.title == "Organization connection changed · 2 organizations" and late.alert_ids == (10, 11)
    assert planner.fold_due() is None
    now[0] += 6  # a lone firing 6 s later is said at once, as itself
    [alone] = planner.offer(StepResult(raised=[grouped(12, "Oscorp")]))
    assert alone.title == "Organization connection changed · organization Oscorp"


def test_a_floods_line_for_an_alert_of_several_firings_says_how_many():
    """Its title would say "× 2"; the flood's title does not, so its line does."""
    planner = NotificationPlanner(QuietTimes(NotificationSettings(), UTC), clock=lambda: 0.0)
    twice = dataclasses.replace(grouped(1, "Acme"), occurrences=2, event_count=2)
    [said] = planner.offer(StepResult(raised=[twice, grouped(2, "Globex")]))
    assert said.title == "Organization connection changed · 2 organizations"
    assert "2 firings in under a second; latest: Role admin assigned to group eng" in said.why.splitlines(), (
        said.why
    )
