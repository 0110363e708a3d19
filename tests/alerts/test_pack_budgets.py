"""The built-in pack stays within its noise budgets over a whole day of ordinary traffic: the demo's default mix (2
events a second, a burst of 25 every 30 s, routine kinds only: about 245,000 events), made by the simulator's
own tenant life in process and evaluated as live, every rule of the pack as shipped at once, a Sunday (all of it
outside working hours). Every built-in rule carries a budget (`max_alerts_per_day`), the chosen-types kind too
(off as shipped: switched on for every deletion, an ordinary day is far over it, which `rules test` says)."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import orjson

from tenant_events.alert_settings import WorkingHours
from tenant_events.alerts.backtest import per_day
from tenant_events.alerts.builtin_rules import BUILTIN_RULES
from tenant_events.alerts.rule_engine import RuleEngine
from tenant_events.simulator.config import SimulatorConfig
from tenant_events.simulator.generator import TenantLife
from tenant_events.simulator.world import iso_ms
from tenant_events.store.records import EventRow

DAY_START = datetime(2026, 11, 29, tzinfo=UTC).timestamp()  # a Sunday
DAY_S = 86_400
SOURCE = "urn:sim:demo-tenant.sim.local"


def _ordinary_day() -> list[EventRow]:
    """A day of the demo's default live mix, as the simulator's live loop times it (activity.py run_live), as
    the stream's fast path stores it (EventRow.at_canonical_time: fields already checked)."""
    cfg = SimulatorConfig()
    life = TenantLife(cfg.seed, tenant_id="ten_DemoTenant000001")
    life.routine = cfg.live_mix == "routine"
    rng = random.Random(cfg.seed)
    rows: list[EventRow] = []
    now, next_burst = DAY_START, DAY_START + cfg.burst_every
    while True:
        now += rng.expovariate(cfg.rate)
        if now >= DAY_START + DAY_S:
            return rows
        n = 1
        if now >= next_burst:
            n, next_burst = cfg.burst_size, now + cfg.burst_every
        stamp = iso_ms(now)
        for _ in range(n):
            kind, data = life.next_event(now)
            purpose = "test" if rng.randrange(cfg.test_purpose_every) == 0 else None
            env = {"specversion": "1.0", "type": kind, "source": SOURCE, "id": f"evt_{len(rows):016d}",
                   "time": stamp, "data": data, "xtenant": "demo", "xstream": "est_" + "a" * 16}  # fmt: skip
            if purpose:
                env["xpurpose"] = purpose
            offset = f"off-{len(rows):08d}"
            raw = orjson.dumps({"offset": offset, "event": env}).decode()
            family = kind.split(".", 1)[0]
            rows.append(
                EventRow.at_canonical_time(
                    env["id"], offset, kind, family, stamp, SOURCE, "demo", purpose, raw, now
                )
            )


def test_every_built_in_rule_has_a_budget_and_an_ordinary_day_stays_within_each():
    assert all(r.max_alerts_per_day for r in BUILTIN_RULES), [
        r.id for r in BUILTIN_RULES if not r.max_alerts_per_day
    ]
    rows = _ordinary_day()
    assert 230_000 < len(rows) < 260_000
    pack = [r for r in BUILTIN_RULES if r.enabled]  # as shipped: the chosen-types kind is off
    chosen = [r.model_copy(update={"enabled": True}) for r in BUILTIN_RULES if not r.enabled]
    engine = RuleEngine(
        [*pack, *chosen], hours=WorkingHours(timezone="UTC"), catch_up_after_s=1e12, clock=lambda: DAY_START
    )
    raised: dict[int, object] = {}
    for at in range(0, len(rows), 5000):  # in commits, as the evaluator takes them
        for alert in engine.feed([(at + 1, rows[at : at + 5000])]):
            raised[id(alert)] = alert
    by_rule: dict[str, list] = {r.id: [] for r in (*pack, *chosen)}
    for alert in raised.values():
        by_rule[alert.write.rule_id].append(alert)
    days = {rule: per_day(alerts) for rule, alerts in by_rule.items()}
    print({rule: sum(d.values()) for rule, d in days.items()})
    for rule in pack:
        assert all(n <= rule.max_alerts_per_day for n in days[rule.id].values()), (rule.id, days[rule.id])
    assert sum(len(by_rule[r.id]) for r in pack) <= len(rows) // 100
    for rule in chosen:  # every deletion said: the budget tells
        assert max(days[rule.id].values()) > rule.max_alerts_per_day, (rule.id, days[rule.id])
