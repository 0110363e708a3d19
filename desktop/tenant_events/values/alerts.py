"""An alert as the store keeps it and the inbox, the CLI and the destinations read it back, and its severity.

The evaluator writes alerts (store/alert_records.py `AlertWrite`); `AlertInbox` reads them as `StoredAlert`s.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

Severity = Literal["info", "warning", "critical"]


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

    @property
    def read(self) -> bool:
        return self.read_at is not None

    @property
    def raised_at_iso(self) -> str:
        return (
            datetime.fromtimestamp(self.raised_at, UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z")
        )
