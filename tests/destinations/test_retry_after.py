"""Retry-After is honoured only within sane, finite bounds: a receiver cannot park a destination forever."""

from __future__ import annotations

from email.utils import formatdate

import pytest

from tenant_events.destinations.send import RETRY_AFTER_MAX, retry_after_seconds


@pytest.mark.parametrize(
    ("value", "expected"),
    [("5", 5.0), ("0", 1.0), ("-30", 1.0), ("1e12", RETRY_AFTER_MAX), ("inf", RETRY_AFTER_MAX), ("nan", None),
     ("soon", None), ("", None), (None, None)],
)  # fmt: skip
def test_retry_after_seconds(value, expected):
    assert retry_after_seconds(value) == expected


def test_retry_after_as_an_http_date():
    assert retry_after_seconds(formatdate(1_000_120, usegmt=True), now=1_000_000) == 120.0
