"""What the desktop notifier is offered: every stored row once (each commit's range, tenant/committed_rows.py), through the policy.

The policy (notifications/policy.py, Qt-free) decides what shows; this keeps it fed from the settings (types,
do-not-disturb, quiet hours) and from each commit, and owns the notifier that raises the notifications.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta

from PySide6.QtCore import QObject

from tenant_events.notifications.policy import DEFAULT_TYPES, Candidate, NotifyPolicy
from tenant_events.settings import NotificationSettings
from tenant_events.tenant.committed_rows import CommittedRows
from tenant_events.tenant.records import EventFilter
from tenant_events.ui.notifications.desktop_notifier import Notifier
from tenant_events.view.reader_pages import ReaderPages

MAX_NOTIFY_SCAN = 2000


class NotificationController:
    """The policy and the notifier, fed the rows of each commit."""

    def __init__(self, settings: NotificationSettings, parent: QObject) -> None:
        self.policy = NotifyPolicy(types=set(settings.event_types) or set(DEFAULT_TYPES))
        self.apply_mute_settings(settings)
        self.notifier = Notifier(self.policy, parent)

    def offer_committed(self, pages: ReaderPages, rows: CommittedRows) -> None:
        """Offer the rows a commit stored: the link's ranges tile the stored rows, so each is offered once."""
        flt = EventFilter(types=frozenset(self.policy.types))
        events = pages.reader.newer_than(flt, rows.after_seq, limit=MAX_NOTIFY_SCAN)
        self.notifier.offer(
            [
                Candidate(rows.tenant, e.seq, e.event_id, e.type, e.time, e.summary)
                for e in events
                if e.seq in rows
            ]
        )

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
