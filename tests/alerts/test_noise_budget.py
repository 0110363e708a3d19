"""Ordinary simulated traffic stays quiet enough to be read: 3,000 events of the demo's default mix (2 events a
second and a burst of 25 every 30 s, compressed 20×) raise at most one alert per 100 events, no rule is said
more than once in 5 seconds, and no built-in rule goes over its noise budget."""

from __future__ import annotations

import asyncio
import collections
import contextlib

from alerts.test_builtin_rules_live import _follow
from tenant_events.alert_settings import AlertSettings
from tenant_events.alerts.builtin_rules import BUILTIN_RULES
from tenant_events.paths import AppPaths
from tenant_events.store import AlertInbox
from tenant_events.store.schema import connect

EVENTS = 3000


def test_3000_events_of_the_demo_mix_raise_at_most_one_alert_per_100_and_no_flood(make_simulator, tmp_path):
    sim = make_simulator(
        seed=1, rate=2.0, burst_every=30.0, burst_size=25, speed=20.0, heartbeat=0.2, scenario="demo"
    )
    paths = AppPaths.resolve(tmp_path).ensure()
    db = paths.database_file("acme")

    def stored() -> int:
        if not db.exists():
            return 0
        with contextlib.closing(connect(db, readonly=True)) as conn:
            return int(conn.execute("SELECT count(*) FROM events").fetchone()[0])

    said_at: list = []  # (when, notification) as each was planned

    def enough(_results):
        return stored() >= EVENTS  # stored: the rules evaluate each commit, the last ones as the stream stops

    results, _notes = asyncio.run(
        _follow(sim, paths, AlertSettings(), lambda: None, enough, limit_s=400, said_at=said_at)
    )
    events = stored()
    assert events >= EVENTS, "the simulator did not produce 3,000 events"
    with AlertInbox(db) as inbox:
        alerts = inbox.alerts(limit=10_000)
    by_rule = collections.Counter(a.rule_id for a in alerts)
    print(f"{len(alerts)} alerts for {events} events: {dict(by_rule)}")
    assert len(alerts) <= events // 100, dict(by_rule)
    # the notifications: one rule said at most once in any 5 s of the planner's clock (a flood is one
    # notification; FOLD_S holds the rest to be said together)
    rule_of = {a.id: a.rule_id for r in results for a in (*r.raised, *r.updated)}
    last: dict[str, float] = {}
    for at, note in said_at:
        rule = rule_of.get(note.alert_ids[0], "")
        assert rule not in last or at - last[rule] >= 5.0 - 0.05, (rule, at - last[rule], note.title)
        last[rule] = at
    print(f"{len(said_at)} notifications: {[n.title for _, n in said_at]}")
    budgets = {r.id: r.max_alerts_per_day for r in BUILTIN_RULES if r.max_alerts_per_day}
    for rule, n in by_rule.items():
        assert rule not in budgets or n <= budgets[rule], (rule, n)
