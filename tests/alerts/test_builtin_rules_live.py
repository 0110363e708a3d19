"""The built-in rules against the real simulator and the real stream engine: each fires on the scenario that
acts out its incident and on nothing else, and five minutes of ordinary demo traffic stay quiet."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime

import pytest

from tenant_events.alert_settings import WEEKDAYS, AlertSettings, WorkingHours
from tenant_events.alerts.delivery import NotificationPlanner, QuietTimes
from tenant_events.alerts.evaluator_process import attach
from tenant_events.monitor import TenantMonitor
from tenant_events.paths import AppPaths
from tenant_events.settings import NotificationSettings
from tenant_events.stream.engine import EngineConfig
from tenant_events.stream.tokens import StaticTokenProvider

AROUND_THE_CLOCK = WorkingHours(
    start="00:00", end="00:00", days=list(WEEKDAYS)
)  # never "outside working hours"
NEVER_AT_WORK = WorkingHours(days=[])  # always outside


async def _follow(sim, paths, settings, act, settle, limit_s=40.0, said_at=None):
    """Stream `sim` into a fresh database with the rules of `settings`, call `act()`, and collect every step's
    alerts until `settle(results)` holds; returns (results, notifications planned with default settings).
    `said_at`: a list that gets (wall-clock time, notification) for each notification as it is planned."""
    monitor = TenantMonitor(
        "acme", paths, EngineConfig(sim.base_url, name="acme"), StaticTokenProvider(sim.mint_token())
    )
    await monitor.start()
    runner = attach(monitor, "acme", settings.model_dump_json(), by_received=False, resume=None)
    planner = NotificationPlanner(QuietTimes(NotificationSettings()), hold_s=0)
    results, notes = [], []
    runner.on_alerts.append(results.append)

    def plan(result):
        planned = planner.offer(result)
        notes.extend(planned)
        if said_at is not None:
            said_at.extend((time.time(), n) for n in planned)

    runner.on_alerts.append(plan)
    try:
        for _ in range(500):
            if monitor.state.state.value == "live":
                break
            await asyncio.sleep(0.02)
        await asyncio.to_thread(act)
        for _ in range(int(limit_s / 0.05)):
            if settle(results):
                break
            await asyncio.sleep(0.05)
    finally:
        await monitor.stop()
    summary = planner.summary()
    return results, notes + ([summary] if summary else [])


def raised(results):
    return [a.rule_id for r in results for a in r.raised]


# a mass deletion is made by one client: the global rule and the per-actor rule both see it
ALSO: dict[str, set[str]] = {
    "mass-deletion": {"mass-deletion-by-actor"},
    "admin-group-member": {"admin-role"},
    "admin-group-deleted": {"admin-role"},
    "temporary-elevation": {"admin-role"},
}


SET_UP = {"org-connection": ("org-connection-onboarding",)}


@pytest.mark.parametrize(
    ("rule", "step", "options"),
    [
        ("mass-deletion", "mass_deletion", {"n": 30, "over_s": 3}),
        ("mass-deletion", "mass_deletion", {"n": 20, "of": "groups", "over_s": 0}),
        (
            "mass-deletion-by-actor",
            "mass_deletion",
            {"n": 12, "over_s": 240},
        ),  # 3 a minute: under the global rule
        ("temporary-elevation", "temporary_elevation", {"over_s": 60}),
        ("admin-group-member", "admin_group_member", {}),
        ("admin-group-deleted", "admin_group_deleted", {}),
        ("signup-wave", "signup_wave", {"n": 25, "over_s": 10}),
        ("shared-phone", "shared_phone", {"n": 3, "over_s": 2}),
        ("account-linked", "account_link", {}),
        ("admin-role", "admin_grant", {"to": "member"}),
        ("admin-role", "admin_grant", {"to": "group"}),
        ("admin-role", "admin_grant", {"to": "org_group"}),
        ("org-connection", "org_connection", {"action": "added"}),
        ("org-connection", "org_connection", {"action": "removed"}),
        ("org-deleted", "org_deleted", {}),
        ("signup-burst", "signup_burst", {"n": 80, "over_s": 4}),
        ("off-hours", "off_hours", {"n": 3, "over_s": 0}),
    ],
)
def test_each_builtin_rule_fires_on_its_scenario_and_nothing_else_does(
    make_simulator, tmp_path, rule, step, options
):
    sim = make_simulator(seed=5, heartbeat=0.2, speed=20.0 if options.get("over_s", 0) > 30 else 1.0)
    hours = NEVER_AT_WORK if rule == "off-hours" else AROUND_THE_CLOCK
    settings = AlertSettings(working_hours=hours)
    paths = AppPaths.resolve(tmp_path).ensure()
    last = []

    def act():
        last.append(sim.scenario(step, **options)["last_seq"])

    # a connection the scenario adds to the organization it just created (its prerequisite) is set-up: the
    # onboarding rule's, an info alert, instead
    either = [{rule} | ALSO.get(rule, set()), *({alt} for alt in SET_UP.get(rule, ()))]
    results, notes = asyncio.run(
        _follow(sim, paths, settings, act, lambda rs: any(e <= set(raised(rs)) for e in either), limit_s=30)
    )
    assert any(r in raised(results) for e in either for r in e), f"{rule} did not fire"
    # the scenario's prerequisites (a user to delete, an organization to grant in) are routine: nothing else fires
    assert set(raised(results)) in either, raised(results)
    assert [n.alert_ids for n in notes] == [
        (a.id,) for r in results for a in r.raised
    ]  # one notification each


@pytest.mark.parametrize(("hours", "at_most"), [(None, 3), (AROUND_THE_CLOCK, 0)])
def test_ten_minutes_of_ordinary_demo_traffic_stay_quiet(make_simulator, tmp_path, hours, at_most):
    """Default simulator traffic (2 events/s, a burst of 25 every 30 s) for ten tenant minutes, compressed 20×.
    With default settings the only rule ordinary traffic can meet is "changes outside working hours" (it depends
    on when the test runs), and it coalesces to one alert an hour."""
    sim = make_simulator(seed=1, rate=2.0, burst_every=30.0, burst_size=25, speed=20.0, heartbeat=0.2)
    settings = AlertSettings() if hours is None else AlertSettings(working_hours=hours)
    paths = AppPaths.resolve(tmp_path).ensure()
    start = sim.stats()["last_seq"]

    def act():
        pass

    def ten_minutes_in(_results):
        return sim.stats()["last_seq"] - start >= 2 * 600 + 25 * 19  # 600 s at 2/s and the bursts

    results, notes = asyncio.run(_follow(sim, paths, settings, act, ten_minutes_in, limit_s=80))
    assert ten_minutes_in(results), "the simulator did not produce ten minutes of traffic"
    critical = [a for r in results for a in r.raised if a.severity == "critical"]
    assert [a.rule_id for a in critical] == [], [
        (a.rule_id, a.event_count, a.first_time, a.last_time, a.type_counts, a.catch_up) for a in critical
    ]  # (what it counted, and over which event times)
    alerts = raised(results)
    assert [r for r in alerts if r != "off-hours"] == []
    assert alerts.count("off-hours") <= 1
    assert len(notes) <= at_most


def test_the_demo_shows_a_correlation_alert_in_its_first_three_minutes(make_simulator, tmp_path):
    """The demo scenario (`--demo`) acts out a temporary elevation: an admin role assigned and removed again,
    a sequence for one member, raised within the demo's first three (tenant) minutes."""
    started = time.time()
    sim = make_simulator(seed=1, scenario="demo", speed=10.0, heartbeat=0.2)
    paths = AppPaths.resolve(tmp_path).ensure()
    results, _ = asyncio.run(
        _follow(
            sim,
            paths,
            AlertSettings(working_hours=AROUND_THE_CLOCK),
            lambda: None,
            lambda rs: "temporary-elevation" in raised(rs),
            limit_s=40,
        )
    )
    [alert] = [a for r in results for a in r.raised if a.rule_id == "temporary-elevation"]
    assert alert.rule_name.startswith("Temporary elevation · user ") and alert.event_count == 2
    happened = datetime.fromisoformat(alert.last_time.replace("Z", "+00:00")).timestamp()
    assert happened - started < 180, happened - started  # tenant seconds after the demo began
