"""What the status bar and the tray say about one tenant link, from its stream's state and numbers (Qt-free:
the app's signal adapter emits it, and anything else could print it)."""

from __future__ import annotations

import time
from datetime import datetime

from tenant_events.server_text import shown
from tenant_events.stream.states import EngineStats, StreamState
from tenant_events.view.tenant_status import TenantStatus, TrayState

TRAY_STATE = {
    StreamState.CONNECTING: TrayState.RECONNECTING,
    StreamState.RECONNECTING: TrayState.RECONNECTING,
    StreamState.RATE_LIMITED: TrayState.RECONNECTING,
    StreamState.TOO_MANY_CONNECTIONS: TrayState.RECONNECTING,
    StreamState.CATCHING_UP: TrayState.CATCHING_UP,
    StreamState.LIVE: TrayState.LIVE,
    StreamState.PAUSED: TrayState.PAUSED,
    StreamState.SIGNED_OUT: TrayState.SIGNED_OUT,
    StreamState.ERROR: TrayState.ERROR,
    StreamState.STOPPED: TrayState.PAUSED,
}


def tenant_status(
    tenant: str, state: TrayState, reason: str, stats: EngineStats | None, *, signed_in: bool
) -> TenantStatus:
    """`stats` is None while no stream runs (signed out, not started)."""
    catch_up = ""
    if state is TrayState.CATCHING_UP and stats is not None and stats.last_event_time:
        catch_up = f"catching up — {behind(stats.last_event_time)} behind, {stats.events_stored:,} events"
    return TenantStatus(
        tenant=tenant,
        state=state,
        reason=shown(reason, None),  # it may quote a server (server_text.py): never raw in the window
        events_per_s=stats.events_per_second if stats else 0.0,
        cursor_age_s=stats.cursor_age if stats else None,
        last_event=stats.last_event_time or "" if stats else "",
        catch_up=catch_up,
        signed_in=signed_in,
    )


def behind(iso: str) -> str:
    """How long ago an event time was, in the unit a person reads at a glance."""
    try:
        lag = time.time() - datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return "?"
    if lag < 120:
        return f"{lag:.0f} s"
    if lag < 7200:
        return f"{lag / 60:.0f} min"
    return f"{lag / 3600:.1f} h"
