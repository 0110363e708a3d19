"""What the store hands out of one tenant's events: stored rows, rejected frames, and the filter a reader takes.

The UI reads `StoredEvent`s through `EventReader` with an `EventFilter`; the CLI's export writes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class EventFilter:
    """What the table shows. Empty `types` means all; `text` is a full-text search over id, summary and data;
    `query` is the query line's text (tenant_events.query: fields, OR, negation), parsed and run by the store."""

    types: frozenset[str] = frozenset()
    text: str = ""
    since: datetime | None = None
    until: datetime | None = None
    include_test: bool = True
    tenant: str | None = None
    query: str = ""


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """One stored event as the UI shows it; `raw` only filled by `EventReader.get`."""

    seq: int
    event_id: str
    offset: str
    type: str
    family: str
    time: str
    source: str
    tenant: str
    purpose: str | None
    summary: str
    received_at: float
    raw: str | None = None

    @property
    def is_test(self) -> bool:
        return self.purpose == "test"


@dataclass(frozen=True, slots=True)
class StoredRejected:
    id: int
    received_at: float
    event_name: str
    offset: str | None
    reason: str
    raw: str
