"""What the status bar and the tray say: engine states mapped to icons, reasons with times, the worst state."""

from __future__ import annotations

import time

from tenant_events.stream.states import StateChange, StreamState
from tenant_events.ui.icons import TrayState
from tenant_events.ui.status import TenantStatus, age_text, tooltip, worst
from tenant_events.ui.tenant_session import TRAY_STATE, reason_text


def test_every_engine_state_has_a_tray_state():
    assert set(TRAY_STATE) == set(StreamState)
    assert TRAY_STATE[StreamState.LIVE] is TrayState.LIVE
    assert TRAY_STATE[StreamState.RATE_LIMITED] is TrayState.RECONNECTING
    assert TRAY_STATE[StreamState.SIGNED_OUT] is TrayState.SIGNED_OUT


def test_reasons_name_the_time_to_wait():
    now = 1_800_000_000.0
    limited = StateChange(StreamState.RATE_LIMITED, "rate limited", "429", retry_at=now + 42)
    expected = time.strftime("%H:%M:%S", time.localtime(now + 42))
    assert reason_text(limited, now) == f"rate limited until {expected}"
    backoff = StateChange(StreamState.RECONNECTING, "connection lost", "network", retry_at=now + 4)
    assert reason_text(backoff, now) == "connection lost; retrying in 4 s"
    scope = StateChange(StreamState.ERROR, "missing scope read:events", "403")
    assert reason_text(scope, now) == "missing scope read:events"


def test_worst_state_wins_and_tooltip_lists_tenants():
    a = TenantStatus("acme", TrayState.LIVE, "live", 3.5, 1.0, "2026-11-22T12:00:00Z", signed_in=True)
    b = TenantStatus("globex", TrayState.ERROR, "missing scope read:events")
    assert worst([a, b]) is TrayState.ERROR
    assert worst([a]) is TrayState.LIVE
    assert worst([]) is TrayState.SIGNED_OUT
    text = tooltip([a, b], unread=12)
    assert (
        "12 unread" in text and "acme: live" in text and "globex: error — missing scope read:events" in text
    )
    assert "3.5/s" in text
    assert (
        age_text(None) == "no cursor yet"
        and age_text(30) == "cursor 30 s old"
        and age_text(7200) == "cursor 2.0 h old"
    )
