"""A rule tried on stored history counts in good English ("once", "1 notification, 1 event")."""

from __future__ import annotations

from tenant_events.alerts.history import RuleTrial


def test_trial_counts_in_good_english():
    one = RuleTrial("r", 7, firings=1, alerts=1, events=1)
    assert one.sentence() == "would have fired once in the last 7 days (1 notification, 1 event)"
    many = RuleTrial("r", 1, firings=3, alerts=2, events=1200)
    assert many.sentence() == "would have fired 3 times in the last day (2 notifications, 1,200 events)"


def test_a_trial_counts_each_firing_said_again_as_a_notification():
    """A critical alert that fired twice was said twice on the desktop: the trial says so."""
    from tenant_events.alerts.builtin_rules import BUILTIN_RULES
    from tenant_events.alerts.history import _said

    rule = BUILTIN_RULES[0]
    assert _said("critical", 2, rule) == 2
    assert _said("info", 1339, rule) == 1
    assert _said("warning", 3, rule.model_copy(update={"renotify": False})) == 1
    twice = RuleTrial("r", 1, firings=2, alerts=1, events=102, notifications=2)
    assert twice.sentence() == "would have fired 2 times in the last day (2 notifications, 102 events)"
