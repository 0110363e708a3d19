"""A rule tried on stored history counts in good English ("once", "1 notification, 1 event")."""

from __future__ import annotations

from tenant_events.alerts.history import RuleTrial


def test_trial_counts_in_good_english():
    one = RuleTrial("r", 7, firings=1, alerts=1, events=1)
    assert one.sentence() == "would have fired once in the last 7 days (1 notification, 1 event)"
    many = RuleTrial("r", 1, firings=3, alerts=2, events=1200)
    assert many.sentence() == "would have fired 3 times in the last day (2 notifications, 1,200 events)"
