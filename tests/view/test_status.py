"""What the status bar and the tray say: engine states mapped to icons, reasons with times, the worst state."""

from __future__ import annotations

import time

from tenant_events.tenant.status import TRAY_STATE
from tenant_events.values.stream_states import StateChange, StreamState, state_line
from tenant_events.view.tenant_status import TenantStatus, TrayState, age_text, tooltip, worst


def test_every_engine_state_has_a_tray_state():
    assert set(TRAY_STATE) == set(StreamState)
    assert TRAY_STATE[StreamState.LIVE] is TrayState.LIVE
    assert TRAY_STATE[StreamState.RATE_LIMITED] is TrayState.RECONNECTING
    assert TRAY_STATE[StreamState.SIGNED_OUT] is TrayState.SIGNED_OUT


def test_reasons_name_the_time_to_wait():
    now = 1_800_000_000.0
    until = time.strftime("%H:%M:%S", time.localtime(now + 42))
    limited = StateChange(StreamState.RATE_LIMITED, f"rate limited until {until}", "429", retry_at=now + 42)
    assert state_line(limited, now) == f"rate limited until {until}"
    backoff = StateChange(StreamState.RECONNECTING, "connection lost", "network", retry_at=now + 4)
    assert state_line(backoff, now) == "reconnecting in 4 s — connection lost"
    assert state_line(backoff, now + 3.2) == "reconnecting in 1 s — connection lost"  # counts down
    scope = StateChange(StreamState.ERROR, "missing scope read:events", "403")
    assert state_line(scope, now) == "error — missing scope read:events"


def test_the_status_line_says_the_state_once_and_catching_up_replaces_it():
    live = TenantStatus("acme", TrayState.LIVE, "live — connected")
    assert live.line() == "acme: live — connected"
    connected = state_line(StateChange(StreamState.CATCHING_UP, "connected"))
    catching = TenantStatus(
        "acme", TrayState.CATCHING_UP, connected, catch_up="catching up — 2 h behind, 120,000 events"
    )
    assert catching.line() == "acme: catching up — 2 h behind, 120,000 events"
    assert TenantStatus("acme").line() == "acme: not signed in"


def test_worst_state_wins_and_tooltip_lists_tenants():
    a = TenantStatus("acme", TrayState.LIVE, "live", 3.5, 1.0, "2026-11-22T12:00:00Z", signed_in=True)
    b = TenantStatus("globex", TrayState.ERROR, "error — missing scope read:events")
    assert worst([a, b]) is TrayState.ERROR
    assert worst([a]) is TrayState.LIVE
    assert worst([]) is TrayState.SIGNED_OUT
    text = tooltip([a, b], new_events=12)
    assert "unread" not in text  # "unread" is the alerts' word (the tray adds their line)
    assert (
        "12 new events" in text
        and "acme: live" in text
        and "globex: error — missing scope read:events" in text
    )
    assert "3.5 events/s" in text and "last event " in text  # the rate spelled out
    assert (
        age_text(None) == "no cursor yet"
        and age_text(30) == "cursor 30 s old"
        and age_text(7200) == "cursor 2.0 h old"
    )
