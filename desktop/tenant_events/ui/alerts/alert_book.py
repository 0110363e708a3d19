"""Every tenant's stored alerts as one list for the inbox and the tray: by latest activity (the alert that fired
last first, so a firing folded into an old alert brings it to the top), unread counts, read marks.

No Qt: a thin holder of one `store.AlertInbox` per tenant database (opened when first needed, since a new
tenant's database appears with its first commit). Alert ids are per database, so an entry carries its tenant's
profile name. The queries are small indexed reads on the alerts table, fine on the UI thread.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tenant_events.errors import StorageError
from tenant_events.store.alerts_inbox import AlertInbox
from tenant_events.values.alerts import StoredAlert

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class InboxEntry:
    """One alert of one tenant (`profile`: the tenant's name in the app)."""

    profile: str
    alert: StoredAlert


class AlertBook:
    """The alert inboxes of the app's tenants."""

    def __init__(self, database_file: Callable[[str], Path]) -> None:
        self._database_file = database_file
        self._profiles: list[str] = []
        self._open: dict[str, AlertInbox] = {}

    def database_file(self, profile: str) -> Path:
        return self._database_file(profile)

    @property
    def profiles(self) -> list[str]:
        return list(self._profiles)

    def add(self, profile: str) -> None:
        if profile not in self._profiles:
            self._profiles.append(profile)

    def remove(self, profile: str) -> None:
        if profile in self._profiles:
            self._profiles.remove(profile)
        inbox = self._open.pop(profile, None)
        if inbox is not None:
            inbox.close()

    def close(self) -> None:
        for inbox in self._open.values():
            inbox.close()
        self._open.clear()

    def _inbox(self, profile: str) -> AlertInbox | None:
        inbox = self._open.get(profile)
        if inbox is None and profile in self._profiles:
            try:
                inbox = self._open[profile] = AlertInbox(self._database_file(profile))
            except (FileNotFoundError, StorageError) as exc:
                log.debug("no alerts for %s yet: %s", profile, exc)
        return inbox

    def entries(self, limit: int = 200, *, unread_only: bool = False) -> list[InboxEntry]:
        """The `limit` alerts that fired last over every tenant, the latest first."""
        out: list[InboxEntry] = []
        for profile in self._profiles:
            inbox = self._inbox(profile)
            if inbox is not None:
                alerts = inbox.alerts(limit=limit, unread_only=unread_only)
                out += [InboxEntry(profile, a) for a in alerts]
        out.sort(key=lambda e: (e.alert.fired_at, e.alert.raised_at, e.alert.id), reverse=True)
        return out[:limit]

    def get(self, profile: str, alert_id: int) -> InboxEntry | None:
        inbox = self._inbox(profile)
        alert = inbox.get(alert_id) if inbox is not None else None
        return InboxEntry(profile, alert) if alert is not None else None

    def team_alert(self, profiles: list[str], team_key: str) -> InboxEntry | None:
        """The team alert named `team_key` on the hub, in the first of `profiles` (hub tenants) that has it."""
        for profile in profiles:
            inbox = self._inbox(profile)
            alert_id = inbox.team_alert_id(team_key) if inbox is not None else None
            if alert_id is not None:
                return self.get(profile, alert_id)
        return None

    def unread(self) -> int:
        return sum(inbox.unread_count() for p in self._profiles if (inbox := self._inbox(p)) is not None)

    def event_seqs(self, profile: str, alert_id: int) -> list[int]:
        inbox = self._inbox(profile)
        return inbox.event_seqs(alert_id) if inbox is not None else []

    def mark_read(self, entries: list[InboxEntry]) -> int:
        """Mark these alerts read; how many were unread."""
        done = 0
        for profile in {e.profile for e in entries}:
            inbox = self._inbox(profile)
            if inbox is not None:
                done += inbox.mark_read([e.alert.id for e in entries if e.profile == profile])
        return done

    def mark_all_read(self, seen: list[InboxEntry]) -> int:
        """Mark every alert up to the latest firing the user saw (per tenant) read; one that fired since stays
        unread."""
        done = 0
        for profile in {e.profile for e in seen}:
            inbox = self._inbox(profile)
            if inbox is not None:
                done += inbox.mark_all_read(max(e.alert.fired_at for e in seen if e.profile == profile))
        return done
