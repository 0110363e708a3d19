"""What the desktop notifier is offered: every stored row once, from a per-tenant watermark, through the policy.

The policy (notifications/policy.py, Qt-free) decides what shows; this keeps it fed from the settings (types,
do-not-disturb, quiet hours) and from each commit, and owns the notifier that raises the notifications.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta

from PySide6.QtCore import QObject

from tenant_events.notifications.policy import DEFAULT_TYPES, Candidate, NotifyPolicy
from tenant_events.settings import NotificationSettings
from tenant_events.store.records import EventFilter
from tenant_events.ui.notifications.desktop_notifier import Notifier
from tenant_events.view.reader_pages import ReaderPages

MAX_NOTIFY_SCAN = 2000


class NotificationController:
    """The policy, the notifier and the per-tenant watermark of rows already offered."""

    def __init__(self, settings: NotificationSettings, parent: QObject) -> None:
        self.policy = NotifyPolicy(types=set(settings.event_types) or set(DEFAULT_TYPES))
        self.apply_mute_settings(settings)
        self.notifier = Notifier(self.policy, parent)
        self._notified_upto: dict[
            str, int
        ] = {}  # per tenant: rows up to this seq were offered to the notifier

    def offer_committed(self, tenant: str, pages: ReaderPages, first_seq: int) -> None:
        """Offer the rows a commit stored.

        Every stored row is offered once: from a per-tenant watermark up to the store's head, not the commit's
        first/last seq (a batch holding duplicates numbers them wrongly). The first commit seeds the mark.
        """
        head = pages.head_seq()
        after = self._notified_upto.get(tenant, first_seq - 1)
        self._notified_upto[tenant] = max(after, head)
        flt = EventFilter(types=frozenset(self.policy.types))
        rows = pages.reader.newer_than(flt, after, limit=MAX_NOTIFY_SCAN)
        self.notifier.offer(
            [Candidate(tenant, e.seq, e.event_id, e.type, e.time, e.summary) for e in rows if e.seq <= head]
        )

    def forget(self, tenant: str) -> None:
        self._notified_upto.pop(tenant, None)

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
