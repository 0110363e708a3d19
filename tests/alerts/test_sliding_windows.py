"""Threshold windows at their edges: half-open by event time, one firing per burst, late events, bounded memory."""

from __future__ import annotations

from tenant_events.alerts.windows import BurstWindow, Outcome
from tenant_events.store import EvalRow


def ev(seq: int, ms: int) -> EvalRow:
    return EvalRow(seq, f"evt_{seq:016d}", "user.deleted", "", ms, "demo", None, None)


def feed(window: BurstWindow, times: list[int]) -> list[Outcome]:
    return [window.offer(ev(i + 1, t))[0] for i, t in enumerate(times)]


def test_twenty_within_a_minute_fires_on_the_twentieth():
    w = BurstWindow(20, 60_000)
    times = [i * 3157 for i in range(20)]  # 19 gaps of 3.157 s: the last is 59.983 s after the first
    outcomes = feed(w, times)
    assert outcomes[:19] == [Outcome.QUIET] * 19 and outcomes[19] is Outcome.FIRE


def test_events_exactly_one_window_apart_are_not_in_one_window():
    w = BurstWindow(20, 60_000)
    times = [round(i * 60_000 / 19) for i in range(20)]  # first at 0, twentieth at exactly 60.000 s
    assert Outcome.FIRE not in feed(w, times)
    # one millisecond less and it is a burst
    w = BurstWindow(20, 60_000)
    times[-1] = 59_999
    assert feed(w, times)[-1] is Outcome.FIRE


def test_fire_carries_the_window_events_then_the_burst_continues_until_a_gap():
    w = BurstWindow(3, 10_000)
    assert feed(w, [0, 1000]) == [Outcome.QUIET] * 2
    outcome, events = w.offer(ev(3, 2000))
    assert outcome is Outcome.FIRE and [e.seq for e in events] == [1, 2, 3]
    # each next event within 10 s of the burst's last one joins it, however long the burst lasts
    assert [w.offer(ev(4 + i, 2000 + 9000 * (i + 1)))[0] for i in range(5)] == [Outcome.CONTINUE] * 5
    last = 2000 + 9000 * 5
    # a gap longer than the window ends the burst: a new crossing is a new firing
    assert w.offer(ev(20, last + 10_001))[0] is Outcome.QUIET
    assert w.offer(ev(21, last + 10_002))[0] is Outcome.QUIET
    assert w.offer(ev(22, last + 10_003))[0] is Outcome.FIRE


def test_a_late_event_completes_an_earlier_window():
    w = BurstWindow(3, 10_000)
    assert feed(w, [0, 9000]) == [Outcome.QUIET] * 2
    outcome, events = w.offer(ev(3, 4000))  # arrives after the 9 s one but happened between them
    assert outcome is Outcome.FIRE and sorted(e.time_ms for e in events) == [0, 4000, 9000]


def test_memory_stays_bounded_over_a_long_stream():
    w = BurstWindow(1000, 1000)
    for i in range(20_000):
        w.offer(ev(i, i * 100))
    assert len(w) <= 21  # two windows' worth at 10 events a second
