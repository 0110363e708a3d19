"""Threshold windows at their edges: half-open by event time, one firing per burst, late events, bounded memory."""

from __future__ import annotations

from tenant_events.alerts.thresholds import BurstWindow, Outcome
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


def test_fire_carries_the_window_events_then_the_burst_goes_on_at_the_thresholds_rate():
    w = BurstWindow(3, 10_000)
    assert feed(w, [0, 1000]) == [Outcome.QUIET] * 2
    outcome, events = w.offer(ev(3, 2000))
    assert outcome is Outcome.FIRE and [e.seq for e in events] == [1, 2, 3]
    # each next event less than window / count (3.33 s) after the burst's last joins it, however long it lasts
    assert [w.offer(ev(4 + i, 2000 + 3000 * (i + 1)))[0] for i in range(5)] == [Outcome.CONTINUE] * 5
    last = 2000 + 3000 * 5
    # routine traffic after it, slower than that, joins nothing and ends the burst …
    assert w.offer(ev(20, last + 12_000))[0] is Outcome.QUIET
    # … so the next crossing is a new firing, with its own window's events only
    assert w.offer(ev(21, last + 12_500))[0] is Outcome.QUIET
    outcome, events = w.offer(ev(22, last + 12_800))
    assert outcome is Outcome.FIRE and [e.seq for e in events] == [20, 21, 22]


def test_a_steady_rate_under_the_threshold_after_a_burst_never_joins_it():
    w = BurstWindow(60, 60_000)
    outcomes = feed(w, [i * 900 for i in range(60)])  # 60 in 54 s: fires
    assert outcomes[-1] is Outcome.FIRE
    # then 40 a minute for ten minutes: the window falls under 60 within a minute and nothing fires again
    later = [w.offer(ev(100 + i, 54_000 + 1500 * (i + 1)))[0] for i in range(400)]
    assert Outcome.FIRE not in later
    assert later.count(Outcome.CONTINUE) < 40  # only while the burst's own events are still in the window


def test_an_event_slower_than_the_rate_ends_the_burst_though_the_window_still_holds_the_count():
    w = BurstWindow(3, 10_000)
    feed(w, [0, 1000, 2000])  # fires on the third
    # 4 s after the burst's last: its own window (−6 s, 6 s] still holds all three, but it came slower than
    # 10 s / 3: routine traffic right after an incident does not grow it
    assert w.offer(ev(4, 6000))[0] is Outcome.QUIET and not w.in_burst


def test_distinct_counts_distinct_values_not_events():
    w = BurstWindow(3, 60_000, distinct=True)
    assert [w.offer(ev(i + 1, i * 1000), "user-a")[0] for i in range(5)] == [Outcome.QUIET] * 5
    assert w.offer(ev(6, 6000), "user-b")[0] is Outcome.QUIET
    outcome, events = w.offer(ev(7, 7000), "user-c")
    assert outcome is Outcome.FIRE and len(events) == 7


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


def test_a_second_incident_needs_events_of_its_own_and_never_takes_the_first_ones():
    w = BurstWindow(3, 10_000)
    assert feed(w, [0, 1000, 2000])[-1] is Outcome.FIRE  # seqs 1-3
    assert w.offer(ev(4, 11_500))[0] is Outcome.QUIET  # its window holds 3 (seq 3) and 4 only: the burst ends
    # seq 5's window (1.9 s … 11.9 s) holds 3, 4, 5: three events, but 3 is the first incident's
    assert w.offer(ev(5, 11_900))[0] is Outcome.QUIET
    outcome, events = w.offer(ev(6, 12_100))
    assert outcome is Outcome.FIRE and [e.seq for e in events] == [4, 5, 6]


def test_a_restart_with_the_stored_links_carries_on_as_if_it_never_stopped():
    times = [0, 1000, 2000, 11_500, 11_900, 12_100, 12_300, 30_000, 30_100, 30_200]
    straight = BurstWindow(3, 10_000)
    fired = [straight.offer(ev(i + 1, t)) for i, t in enumerate(times)]
    linked = {e.seq for outcome, events in fired[:7] if outcome is not Outcome.QUIET for e in events}
    assert linked == {1, 2, 3, 4, 5, 6, 7}
    restored = BurstWindow(3, 10_000)
    for i, t in enumerate(times[:7]):  # the events evaluated before the restart, refilled from the store
        restored.replay(ev(i + 1, t), spent=i + 1 in linked)
    after = [restored.offer(ev(i + 8, t)) for i, t in enumerate(times[7:])]
    assert [(o, [e.seq for e in events]) for o, events in after] == [
        (o, [e.seq for e in events]) for o, events in fired[7:]
    ]
    assert [o for o, _ in after] == [Outcome.QUIET, Outcome.QUIET, Outcome.FIRE]
