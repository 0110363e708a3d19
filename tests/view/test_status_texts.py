"""What the status bar and the tray say, in words a person reads: "paused" instead of a rate while paused, the
last event's time on the user's clock, and a sign-in failure that names the sign-in once (the status bar's
labels and a stored cursor's age: tests/ui/window/test_status_bar_texts.py)."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime

import pytest

from tenant_events.view.tenant_status import (
    TenantStatus,
    TrayState,
    local_when,
    rate_text,
    sign_in_line,
    tooltip,
)


@pytest.fixture
def kolkata():
    """A zone 5:30 off UTC, so a local time cannot pass for the UTC one."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = "Asia/Kolkata"
    time.tzset()
    yield
    if before is None:
        os.environ.pop("TZ")
    else:
        os.environ["TZ"] = before
    time.tzset()


def test_the_rate_says_paused_while_paused():
    live = TenantStatus("acme", TrayState.LIVE, "live", events_per_s=3.25)
    paused = TenantStatus("acme", TrayState.PAUSED, "paused", events_per_s=3.25)
    assert rate_text(live) == "3.2 events/s"
    assert rate_text(paused) == "paused"
    text = tooltip([TenantStatus("acme", TrayState.PAUSED, "paused", 3.25, 1.0, "2026-11-22T12:00:00Z")], 0)
    assert "paused" in text.splitlines()[-1] and "/s" not in text


def test_the_tooltip_shows_the_last_event_on_the_local_clock(kolkata):
    now = datetime.now(UTC).replace(microsecond=0)
    iso = now.isoformat().replace("+00:00", "Z")
    text = tooltip([TenantStatus("acme", TrayState.LIVE, "live", 1.0, 1.0, iso)], 0)
    local = now.astimezone().strftime("%H:%M:%S")
    assert local != now.strftime("%H:%M:%S")  # the zone really differs from UTC
    assert f"last event {local} · 1.0 events/s" in text
    assert iso not in text and "Z" not in text.split("last event")[1]
    # an older event gets its date, still local: 2026-01-01 23:00 UTC is 2026-01-02 04:30 in Kolkata
    assert local_when("2026-01-01T23:00:00.000Z", now=now) == "2026-01-02 04:30"
    assert local_when("not a time") == "not a time"


def test_a_sign_in_that_did_not_finish_says_why_once():
    assert sign_in_line("sign-in was cancelled", cancelled=True) == "sign-in cancelled"
    refused = sign_in_line("the sign-in was cancelled or refused in the browser", cancelled=False)
    assert refused == "the sign-in was cancelled or refused in the browser"
    assert sign_in_line("the tenant refused the request (400 invalid_grant)", cancelled=False) == (
        "sign-in failed: the tenant refused the request (400 invalid_grant)"
    )
