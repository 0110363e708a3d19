"""An alert as the store keeps it and the inbox, the CLI and the destinations read it back, and its severity.

The evaluator writes alerts (store/alert_records.py `AlertWrite`); `AlertInbox` reads them as `StoredAlert`s.
Its place in its life (firing, acknowledged, snoozed, resolved) is values/alert_lifecycle.py's `phase_of` over
its triage; `firing` is the evidence of its latest firing (a version), what a notification of it says.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from tenant_events.values.alert_lifecycle import Phase, phase_of

Severity = Literal["info", "warning", "critical"]


@dataclass(frozen=True, slots=True)
class Firing:
    """One firing's evidence: its version (the alert's firing count then) and its events, a threshold's window
    that crossed and the burst that went on at its rate, a sequence's steps, or the one event."""

    version: int
    events: int
    first_time: str
    last_time: str
    first_ms: int
    last_ms: int
    types: dict[str, int]

    def as_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "events": self.events,
            "first_time": self.first_time,
            "last_time": self.last_time,
            "first_ms": self.first_ms,
            "last_ms": self.last_ms,
            "types": self.types,
        }

    @classmethod
    def from_json(cls, data: Any) -> Firing | None:
        """The record of `as_json`, None for anything else (an alert stored before firings were kept)."""
        try:
            return cls(
                int(data["version"]),
                int(data["events"]),
                str(data["first_time"]),
                str(data["last_time"]),
                int(data["first_ms"]),
                int(data["last_ms"]),
                {str(k): int(v) for k, v in dict(data["types"]).items()},
            )
        except (KeyError, TypeError, ValueError):
            return None


@dataclass(frozen=True, slots=True)
class StoredAlert:
    """One alert as stored; `read_at` None while unread. Times are the events' own (ISO 8601, UTC)."""

    id: int
    rule_id: str
    rule_name: str
    severity: Severity
    tenant: str
    catch_up: bool
    notify: bool
    occurrences: int
    event_count: int
    first_seq: int
    last_seq: int
    first_event_id: str
    last_event_id: str
    first_time: str
    last_time: str
    last_time_ms: int
    type_counts: dict[str, int]
    detail: str
    raised_at: float
    updated_at: float
    read_at: float | None
    fired_at: float = 0.0  # wall clock of its latest firing: the inbox and the tray put the latest first
    raised_ms: int = 0  # event time of the firing that raised it: `coalesce_minutes` counts from there
    firing: Firing | None = None  # the latest firing (None: stored before firings were kept)
    triage: str | None = None  # its current triage state (None: nobody triaged it)
    snoozed_until: float | None = None
    group_key: str = ""  # a grouped rule's group, as its rule keys it ("": no group_by)

    @property
    def read(self) -> bool:
        return self.read_at is not None

    @property
    def version(self) -> int:
        """Its firings so far: each one is said (notified, delivered) as a new version."""
        return self.occurrences

    def phase(self, now: float) -> Phase:
        return phase_of(self.triage, self.snoozed_until, now)

    @property
    def latest(self) -> Firing:
        """The latest firing's evidence (an alert stored before firings were kept: the whole alert)."""
        if self.firing is not None:
            return self.firing
        first_ms = iso_ms(self.first_time)
        return Firing(
            self.occurrences,
            self.event_count,
            self.first_time,
            self.last_time,
            first_ms if first_ms is not None else self.last_time_ms,
            self.last_time_ms,
            dict(self.type_counts),
        )

    @property
    def raised_at_iso(self) -> str:
        return (
            datetime.fromtimestamp(self.raised_at, UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z")
        )


def iso_ms(iso: str) -> int | None:
    """Unix ms of an ISO 8601 time, None when it is not one."""
    try:
        return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None
