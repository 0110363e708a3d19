"""The user's notification choices, from the tray and the settings dialog into the alerts and the notifier, and
back into the settings file: which event types, do not disturb, notifications on or off, paused with the streams.

    tray (types) ─────▶ the opt-in "Events of chosen types" alert rule (ui/alerts/per_type_rule.py) ─┐
    tray (DND), settings dialog ─▶ NotificationChoices ─▶ AppAlerts.apply / refresh_mute ─────────────┴▶ the links'
    rules, AlertNotes ─▶ Notifier (desktop notifications)

Notifications come from the alert rules only (ui/alerts/app_alerts.py, whose QuietTimes decide what
do-not-disturb and quiet hours hold back); the controller's policy, which the notifier is built on, still
mirrors those settings but is no longer offered rows.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject

from tenant_events.notifications.policy import DEFAULT_TYPES
from tenant_events.paths import AppPaths
from tenant_events.settings import Settings
from tenant_events.ui.alerts.app_alerts import AppAlerts
from tenant_events.ui.alerts.per_type_rule import chosen_types, with_per_type
from tenant_events.ui.notifications.controller import NotificationController, dnd_until
from tenant_events.ui.tray.tray_icon import Tray
from tenant_events.ui.window.main_window import MainWindow


class NotificationChoices:
    """Owns the notification controller and the app's alerts; `save()` writes the settings file in the
    background."""

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
        self.controller = NotificationController(settings().notifications, parent)
        self.policy, self.notifier = self.controller.policy, self.controller.notifier
        self.notifier.attach_tray(tray.icon if tray else None)
        self.alerts = AppAlerts(window, self.notifier, settings(), paths)
        if tray is not None:
            tray.set_notify_types(chosen_types(settings().alerts))

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
        self.alerts.refresh_mute()
        self._save()

    def set_types(self, types: set[str], save: bool = True) -> None:
        """Ticked in the tray (`save`): the opt-in per-type alert rule notifies these types (none: it is off)."""
        self.policy.types = set(types)
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
        n = settings.notifications
        self.set_types(set(n.event_types) or set(DEFAULT_TYPES), save=False)
        self.controller.apply_mute_settings(n)
        self.policy.paused = self.policy.paused or not n.enabled
        self.alerts.apply(settings)

    async def close(self) -> None:
        await self.alerts.close()
        await self.notifier.close()
