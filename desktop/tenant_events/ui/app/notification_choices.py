"""The user's notification choices, from the tray and the settings dialog into the notifier, and back into the
settings file: which event types, do not disturb, notifications on or off, paused with the streams.

    tray (types, DND) ─┐                                         ┌▶ NotifyPolicy (notifications/policy.py)
    settings dialog ───┴─▶ NotificationChoices ─▶ controller ───┤
    TenantRoster.rows_committed ─▶ offer(rows) ─────────────────┘▶ Notifier (desktop notifications)
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject

from tenant_events.notifications.policy import DEFAULT_TYPES
from tenant_events.settings import Settings
from tenant_events.tenant.committed_rows import CommittedRows
from tenant_events.ui.app.tenant_session import TenantSession
from tenant_events.ui.notifications.controller import NotificationController, dnd_until
from tenant_events.ui.tray.tray_icon import Tray


class NotificationChoices:
    """Owns the notification controller; `save()` writes the settings file in the background."""

    def __init__(
        self,
        settings: Callable[[], Settings],
        save: Callable[[], None],
        tray: Tray | None,
        parent: QObject,
    ) -> None:
        self._settings, self._save, self._tray = settings, save, tray
        self.controller = NotificationController(settings().notifications, parent)
        self.policy, self.notifier = self.controller.policy, self.controller.notifier
        self.notifier.attach_tray(tray.icon if tray else None)
        if tray is not None:
            tray.set_notify_types(self.policy.types)

    def offer(self, session: TenantSession, rows: CommittedRows) -> None:
        """A commit's rows, to notify about those the policy lets through (nothing while turned off)."""
        if session.pages is not None and self._settings().notifications.enabled:
            self.controller.offer_committed(session.pages, rows)

    def set_paused(self, paused: bool) -> None:
        self.policy.paused = paused

    def set_dnd(self, seconds: float) -> None:
        """Tray "Do not disturb" (seconds from now; -1: until tomorrow 08:00; 0: off), kept across restarts."""
        until = dnd_until(seconds)
        n = self._settings().notifications
        n.do_not_disturb_until = until
        if until is None:
            n.do_not_disturb = False
        self.controller.apply_mute_settings(n)
        self._save()

    def set_types(self, types: set[str], save: bool = True) -> None:
        self.policy.types = set(types)
        if self._tray is not None:
            self._tray.set_notify_types(self.policy.types)
        if save:
            self._settings().notifications.event_types = sorted(types)
            self._save()

    def apply(self, settings: Settings) -> None:
        """New settings from the dialog (the app saves them itself)."""
        n = settings.notifications
        self.set_types(set(n.event_types) or set(DEFAULT_TYPES), save=False)
        self.controller.apply_mute_settings(n)
        self.policy.paused = self.policy.paused or not n.enabled

    async def close(self) -> None:
        await self.notifier.close()
