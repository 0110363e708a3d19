"""What the status bar and the tray say about one tenant link, from its stream's state and numbers (Qt-free:
the app's signal adapter emits it, and anything else could print it)."""

from __future__ import annotations

import time
from datetime import datetime

from tenant_events.server_text import shown
from tenant_events.values.stream_states import EngineStats, StreamState
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


CATCH_UP_SHOWN_S = 15.0  # a resume this close to now is just "live": the user has nothing to learn from it


def tenant_status(
    tenant: str, state: TrayState, reason: str, stats: EngineStats | None, *, signed_in: bool
) -> TenantStatus:
    """`stats` is None while no stream runs (signed out, not started).

    The stream reports "catching up" after every reconnect until it reaches the present, which after a routine
    server rotation is at once: while the newest event is under CATCH_UP_SHOWN_S old, that is shown as live.
    """
    catch_up = ""
    last = stats.last_event_time if stats is not None else None
    if state is TrayState.CATCHING_UP and last and lag_s(last) < CATCH_UP_SHOWN_S:
        state, reason = TrayState.LIVE, "live"
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


def lag_s(iso: str) -> float:
    """Seconds since an event time (infinite when it cannot be read: never mistaken for "now")."""
    try:
        return time.time() - datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return float("inf")


def behind(iso: str) -> str:
    """How long ago an event time was, in the unit a person reads at a glance."""
    lag = lag_s(iso)
    if lag == float("inf"):
        return "?"
    if lag < 120:
        return f"{lag:.0f} s"
    if lag < 7200:
        return f"{lag / 60:.0f} min"
    return f"{lag / 3600:.1f} h"
