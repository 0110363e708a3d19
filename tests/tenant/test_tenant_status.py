"""A tenant's status while it catches up: a real catch-up (old events still to read) says so, with how far behind
it is; a reconnect that resumes at once on fresh events is live."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tenant_events.stream.states import EngineStats
from tenant_events.tenant.status import tenant_status
from tenant_events.view.tenant_status import TrayState


def test_a_real_catch_up_still_says_so():
    old = (datetime.now(UTC) - timedelta(hours=2)).isoformat().replace("+00:00", "Z")
    status = tenant_status(
        "acme",
        TrayState.CATCHING_UP,
        "catching up on stored events",
        EngineStats(events_stored=120_000, last_event_time=old),
        signed_in=True,
    )
    assert status.state is TrayState.CATCHING_UP
    assert status.line() == "acme: catching up — 2.0 h behind, 120,000 events"
    fresh = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    resumed = tenant_status(
        "acme",
        TrayState.CATCHING_UP,
        "catching up on stored events",
        EngineStats(events_stored=911, last_event_time=fresh),
        signed_in=True,
    )
    assert resumed.state is TrayState.LIVE and resumed.line() == "acme: live"
