"""The user's notification choices, from the tray and the settings dialog into the alerts, and back into the
settings file: which event types, do not disturb, quiet hours, notifications on or off.

    tray (types) ─────▶ the opt-in "Events of chosen types" alert rule (ui/alerts/per_type_rule.py) ─┐
    tray (DND), settings dialog ─▶ NotificationChoices ─▶ AppAlerts.apply / refresh_mute ─────────────┴▶ the links'
    rules, AlertNotes ─▶ Notifier (desktop notifications)

Notifications come from the alert rules only. What do-not-disturb and quiet hours hold back is decided in one
place, `alerts/delivery.QuietTimes`, which reads the settings' notification part (ui/alerts/app_alerts.py
hands it new settings).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timedelta

from PySide6.QtCore import QObject

from tenant_events.paths import AppPaths
from tenant_events.settings import Settings
from tenant_events.ui.alerts.app_alerts import AppAlerts
from tenant_events.ui.alerts.desktop_notifier import Notifier
from tenant_events.ui.alerts.per_type_rule import chosen_types, with_per_type
from tenant_events.ui.tray.tray_icon import Tray
from tenant_events.ui.window.main_window import MainWindow


class NotificationChoices:
    """Owns the notifier and the app's alerts; `save()` writes the settings file in the background."""

    def __init__(
        self,
        settings: Callable[[], Settings],
        save: Callable[[], None],
        tray: Tray | None,
        window: MainWindow,
        paths: AppPaths,
        parent: QObject,
    ) -> None:
        self._settings, self._save, self._tray = settings, save, tray
        self.notifier = Notifier(parent)
        self.notifier.attach_tray(tray.icon if tray else None)
        self.alerts = AppAlerts(window, self.notifier, settings(), paths)
        if tray is not None:
            tray.set_notify_types(chosen_types(settings().alerts))

    def set_dnd(self, seconds: float) -> None:
        """Tray "Do not disturb" (seconds from now; -1: until tomorrow 08:00; 0: off), kept across restarts."""
        until = dnd_until(seconds)
        n = self._settings().notifications
        n.do_not_disturb_until = until
        if until is None:
            n.do_not_disturb = False
        self.alerts.refresh_mute()
        self._save()

    def set_types(self, types: set[str], save: bool = True) -> None:
        """Ticked in the tray (`save`): the opt-in per-type alert rule notifies these types (none: it is off)."""
        settings = self._settings()
        if save:
            settings.notifications.event_types = sorted(types)
            with_per_type(settings.alerts, enabled=bool(types), types=sorted(types))
            self.alerts.apply(settings)
        if self._tray is not None:
            self._tray.set_notify_types(chosen_types(settings.alerts))
        if save:
            self._save()

    def apply(self, settings: Settings) -> None:
        """New settings from the dialog (the app saves them itself)."""
        if self._tray is not None:
            self._tray.set_notify_types(chosen_types(settings.alerts))
        self.alerts.apply(settings)

    async def close(self) -> None:
        await self.alerts.close()


def dnd_until(seconds: float) -> float | None:
    """Tray "Do not disturb" as a wall-clock end: seconds from now; -1: until tomorrow 08:00; 0: off (None)."""
    if seconds < 0:
        tomorrow = (datetime.now() + timedelta(days=1)).replace(hour=8, minute=0, second=0, microsecond=0)
        return tomorrow.timestamp()
    return time.time() + seconds if seconds else None
