"""The desktop notifier and the policy it delivers through, kept in step with the settings (do-not-disturb, quiet
hours, types).

Stored rows are no longer offered one by one: notifications come from the alert rules (ui/alerts/app_alerts.py,
whose opt-in "Events of chosen types" rule replaced the per-type path); the policy still holds the mute state.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta

from PySide6.QtCore import QObject

from tenant_events.notifications.policy import DEFAULT_TYPES, NotifyPolicy
from tenant_events.settings import NotificationSettings
from tenant_events.ui.notifications.desktop_notifier import Notifier


class NotificationController:
    """The policy and the notifier."""

    def __init__(self, settings: NotificationSettings, parent: QObject) -> None:
        self.policy = NotifyPolicy(types=set(settings.event_types) or set(DEFAULT_TYPES))
        self.apply_mute_settings(settings)
        self.notifier = Notifier(self.policy, parent)

    def apply_mute_settings(self, n: NotificationSettings) -> None:
        """Do-not-disturb (always, or until a time) and quiet hours from the settings into the policy."""
        self.policy.dnd_until = float("inf") if n.do_not_disturb else (n.do_not_disturb_until or 0.0)
        self.policy.quiet_hours = n.quiet_hours


def dnd_until(seconds: float) -> float | None:
    """Tray "Do not disturb" as a wall-clock end: seconds from now; -1: until tomorrow 08:00; 0: off (None)."""
    if seconds < 0:
        tomorrow = (datetime.now() + timedelta(days=1)).replace(hour=8, minute=0, second=0, microsecond=0)
        return tomorrow.timestamp()
    return time.time() + seconds if seconds else None
