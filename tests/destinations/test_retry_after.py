"""Retry-After is honoured only within sane, finite bounds: a receiver cannot park a destination forever."""

from __future__ import annotations

from email.utils import formatdate

import pytest

from tenant_events.destinations.send import RETRY_AFTER_MAX, retry_after_seconds


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("5", 5.0),
        ("0", 1.0),
        ("-30", 1.0),
        ("1e12", RETRY_AFTER_MAX),
        ("inf", RETRY_AFTER_MAX),
        ("nan", None),
        ("soon", None),
        ("", None),
        (None, None),
    ],
)
def test_retry_after_seconds(value, expected):
    assert retry_after_seconds(value) == expected


def test_retry_after_as_an_http_date():
    assert retry_after_seconds(formatdate(1_000_120, usegmt=True), now=1_000_000) == 120.0


def test_apprise_never_writes_a_url_to_the_app_log(caplog):
    """Apprise logs a URL it cannot parse, whole, at ERROR: none of that reaches the app's log handlers."""
    from tenant_events.destinations.urls import instantiate
    from tenant_events.errors import ConfigError

    secret = "tk-do-not-log-me"
    with pytest.raises(ConfigError):
        instantiate(f"nope://{secret}@host")
    assert secret not in caplog.text
