"""Routine demo traffic never deletes like a script gone wrong: the built-in mass deletion rule (20 users, or groups,
or organizations within a minute) stays quiet on ordinary traffic. A busy test tenant deleted up to 17 users in a
minute by chance, and now and then 20; the simulator's scenario acts the wave out instead."""

from __future__ import annotations

from collections import deque

from tenant_events.alerts import BUILTIN_RULES
from tenant_events.simulator.generator import TenantLife

MASS_DELETED = ("user.deleted", "group.deleted", "organization.deleted")


def test_routine_deletions_stay_at_half_the_mass_deletion_rule_even_at_a_busy_rate():
    [rule] = [r for r in BUILTIN_RULES if r.id == "mass-deletion"]
    assert rule.threshold is not None and rule.threshold.count == 20 and rule.threshold.window_seconds == 60
    assert rule.threshold.per_type and set(rule.types) == set(MASS_DELETED)
    life = TenantLife(1, tenant_id="ten_DemoTenant000001")
    life.routine = True
    times: dict[str, deque[float]] = {t: deque() for t in MASS_DELETED}
    most = dict.fromkeys(MASS_DELETED, 0)
    for i in range(12_000):  # twenty minutes at 600 events a minute
        now = 1_790_000_000 + i / 10
        kind, _ = life.next_event(now)
        if kind in times:
            times[kind].append(now)
            while times[kind][0] <= now - 60:
                times[kind].popleft()
            most[kind] = max(most[kind], len(times[kind]))
    assert most["user.deleted"] == 10, f"{most} routine deletions within one minute"
    assert all(n <= 10 for n in most.values()), most
