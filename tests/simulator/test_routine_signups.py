"""Routine demo traffic stays far below the built-in "sign-ups of unverified or throwaway accounts" rule (20 within
five minutes): a noisy warning on every demo would be noise. The simulator's scenario acts the wave out instead."""

from __future__ import annotations

from collections import deque

from tenant_events.alerts import BUILTIN_RULES
from tenant_events.alerts.matchers import compile_condition
from tenant_events.simulator.generator import TenantLife

# the demo's defaults: 2 events a second and a burst of 25 every 30 s
PER_FIVE_MINUTES = 5 * (2 * 60 + 2 * 25)


def test_routine_sign_ups_never_come_near_a_wave_of_unverified_or_throwaway_accounts():
    [rule] = [r for r in BUILTIN_RULES if r.id == "signup-wave"]
    assert rule.threshold is not None and rule.threshold.count == 20 and rule.threshold.window_seconds == 300
    alternatives = [compile_condition(c) for c in rule.any_of]
    life = TenantLife(1, tenant_id="ten_DemoTenant000001")
    life.routine = True
    window: deque[bool] = deque(maxlen=PER_FIVE_MINUTES)
    most, signups = 0, 0
    for i in range(12 * PER_FIVE_MINUTES):  # an hour of demo traffic
        kind, data = life.next_event(1_790_000_000 + i / 3)
        counted = kind == "user.created" and any(test(data) for test in alternatives)
        signups += kind == "user.created"
        window.append(counted)
        most = max(most, sum(window))
    assert signups > 1000  # sign-ups are common: about 30 a minute
    assert most <= 8, f"{most} unverified or throwaway sign-ups within five minutes of routine traffic"


def test_routine_sign_ups_stay_under_a_burst_even_at_a_busy_rate():
    """A busy test tenant (170 events a minute) held up to 51 sign-ups in a minute by chance, and now and then 60:
    the built-in burst rule fired on ordinary traffic. Routine traffic keeps to 40 a minute whatever the rate."""
    [rule] = [r for r in BUILTIN_RULES if r.id == "signup-burst"]
    assert rule.threshold is not None and rule.threshold.count == 60 and rule.threshold.window_seconds == 60
    life = TenantLife(1, tenant_id="ten_DemoTenant000001")
    life.routine = True
    times: deque[float] = deque()
    most = 0
    for i in range(6000):  # ten minutes at 600 events a minute: unchecked, about 110 sign-ups a minute
        now = 1_790_000_000 + i / 10
        kind, _ = life.next_event(now)
        if kind == "user.created":
            times.append(now)
            while times[0] <= now - 60:
                times.popleft()
            most = max(most, len(times))
    assert most == 40, f"{most} routine sign-ups within one minute"
