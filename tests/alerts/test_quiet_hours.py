"""Quiet hours hold notifications back inside them, local wall time, across midnight or within a day, and the end
is not inside (alerts/delivery.QuietTimes, the one place that decides)."""

from __future__ import annotations

from datetime import datetime

import pytest

from tenant_events.alerts.delivery import QuietTimes
from tenant_events.settings import NotificationSettings


def at(hh: int, mm: int = 0) -> float:
    """A local wall time today as unix seconds (quiet hours are local time)."""
    return datetime.now().replace(hour=hh, minute=mm, second=0, microsecond=0).timestamp()


@pytest.mark.parametrize(
    ("quiet", "hh", "mm", "silent"),
    [
        (("22:00", "07:00"), 23, 30, True),  # spans midnight: late evening
        (("22:00", "07:00"), 3, 0, True),  # … and early morning
        (("22:00", "07:00"), 22, 0, True),  # the start is inside
        (("22:00", "07:00"), 7, 0, False),  # the end is not
        (("22:00", "07:00"), 12, 0, False),
        (("12:00", "13:30"), 12, 45, True),  # same-day range
        (("12:00", "13:30"), 13, 30, False),
        (("09:00", "09:00"), 9, 0, False),  # empty range: never quiet
        (None, 3, 0, False),
    ],
)
def test_quiet_hours_silence_notifications(quiet, hh, mm, silent):
    now = at(hh, mm)
    quiet_times = QuietTimes(NotificationSettings(quiet_hours=quiet))
    assert quiet_times.state(now).muted is silent
    assert quiet_times.allows("warning", now) is (not silent)


def test_quiet_hours_end_and_notifications_return():
    quiet_times = QuietTimes(NotificationSettings(quiet_hours=("22:00", "07:00")))
    assert quiet_times.allows("warning", at(6, 59)) is False
    assert quiet_times.state(at(6, 59)).until == at(7, 0)
    assert quiet_times.allows("warning", at(7, 1)) is True
