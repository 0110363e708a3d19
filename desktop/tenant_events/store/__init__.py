"""Local SQLite store of one tenant's events, cursor, gaps and rejected frames (stdlib sqlite3 only here)."""

from tenant_events.store.reader import EventReader, open_reader
from tenant_events.store.records import (
    Batch,
    CommitResult,
    CursorState,
    EventFilter,
    EventRow,
    GapMarker,
    RejectedRow,
    StoredEvent,
    StoredGap,
    StoredRejected,
)
from tenant_events.store.schema import SCHEMA_VERSION, OpenNotice
from tenant_events.store.writer import StoreWriter

__all__ = [
    "SCHEMA_VERSION",
    "Batch",
    "CommitResult",
    "CursorState",
    "EventFilter",
    "EventReader",
    "EventRow",
    "GapMarker",
    "OpenNotice",
    "RejectedRow",
    "StoreWriter",
    "StoredEvent",
    "StoredGap",
    "StoredRejected",
    "open_reader",
]
