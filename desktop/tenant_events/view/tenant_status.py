"""What the status bar and tray say about one tenant's stream (Qt-free; filled from the engine's state)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum


class TrayState(StrEnum):
    """What the tray icon shows, worst state of all tenants first in `SEVERITY`."""

    LIVE = "live"
    CATCHING_UP = "catching-up"
    RECONNECTING = "reconnecting"
    PAUSED = "paused"
    SIGNED_OUT = "signed-out"
    ERROR = "error"


SEVERITY = (
    TrayState.ERROR,
    TrayState.SIGNED_OUT,
    TrayState.RECONNECTING,
    TrayState.CATCHING_UP,
    TrayState.PAUSED,
    TrayState.LIVE,
)


@dataclass(frozen=True, slots=True)
class TenantStatus:
    tenant: str
    state: TrayState = TrayState.SIGNED_OUT
    reason: str = (
        "not signed in"  # the whole state in words: "live", "reconnecting in 4 s — network error: …"
    )
    events_per_s: float = 0.0
    cursor_age_s: float | None = None
    last_event: str = ""
    catch_up: str = (
        ""  # "catching up — 2 h behind, 120,000 events": said instead of the reason while it lasts
    )
    signed_in: bool = False

    def line(self) -> str:
        """ "acme: live" — the reason says the state itself (values/stream_states.py state_line), so it is not repeated."""
        return f"{self.tenant}: {self.catch_up or self.reason or self.state.value.replace('-', ' ')}"


def worst(statuses: list[TenantStatus]) -> TrayState:
    """The tray shows the most severe state of all tenants (SEVERITY order)."""
    if not statuses:
        return TrayState.SIGNED_OUT
    return min((s.state for s in statuses), key=SEVERITY.index)


def tooltip(statuses: list[TenantStatus], new_events: int) -> str:
    """The tray's tooltip: the events not yet seen in the window ("new", as the window's title says them; the
    alerts' own line says "unread"), then a line per tenant."""
    if not statuses:
        return "Tenant Events — no tenant yet"
    lines = [
        "Tenant Events"
        + (f" — {new_events:,} new event{'' if new_events == 1 else 's'}" if new_events else "")
    ]
    for s in statuses:
        lines.append(s.line())
        if s.last_event:
            lines.append(f"  last event {local_when(s.last_event)} · {rate_text(s)}")
    return "\n".join(lines)


def rate_text(status: TenantStatus) -> str:
    """Events per second, or "paused": a paused stream's rate is not a measurement."""
    if status.state is TrayState.PAUSED:
        return "paused"
    return f"{status.events_per_s:.1f} events/s"


def local_when(iso: str, now: datetime | None = None) -> str:
    """An event's UTC time as the user's wall clock: "14:03:07" today, "2026-11-22 14:03" before."""
    try:
        when = datetime.fromisoformat(iso.replace("Z", "+00:00")).astimezone()
    except ValueError:
        return iso
    today = (now or datetime.now()).astimezone().date()
    return when.strftime("%H:%M:%S") if when.date() == today else when.strftime("%Y-%m-%d %H:%M")


def sign_in_line(message: str, cancelled: bool) -> str:
    """What a sign-in that did not finish says: "sign-in cancelled" when the user cancelled it, else why it
    failed, naming the sign-in once ("the sign-in was refused in the browser", not "sign-in failed: the
    sign-in was…")."""
    if cancelled:
        return "sign-in cancelled"
    text = message.strip()
    return text if "sign-in" in text.lower() else f"sign-in failed: {text}"


def age_text(seconds: float | None) -> str:
    if seconds is None:
        return "no cursor yet"
    if seconds < 60:
        return f"cursor {seconds:.0f} s old"
    if seconds < 3600:
        return f"cursor {seconds / 60:.0f} min old"
    return f"cursor {seconds / 3600:.1f} h old"
