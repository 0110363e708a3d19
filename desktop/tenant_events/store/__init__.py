"""Local SQLite store of one tenant's events, cursor, gaps and rejected frames (stdlib sqlite3 only here)."""

from tenant_events.store.alert_records import AlertWrite, EvalRow, RowSegment
from tenant_events.store.alerts_inbox import AlertInbox
from tenant_events.store.alerts_table import MAX_ALERT_EVENTS, AlertLedger, WatermarkMoved
from tenant_events.store.database_open import OpenNotice
from tenant_events.store.reader import EventReader, open_reader
from tenant_events.store.records import (
    Batch,
    CommitResult,
    CursorState,
    EventRow,
    GapMarker,
    RejectedRow,
    StoredGap,
)
from tenant_events.store.schema import SCHEMA_VERSION
from tenant_events.store.writer import StoreWriter
from tenant_events.values.alerts import Severity, StoredAlert
from tenant_events.values.events import EventFilter, StoredEvent, StoredRejected

__all__ = [
    "MAX_ALERT_EVENTS",
    "SCHEMA_VERSION",
    "AlertInbox",
    "AlertLedger",
    "AlertWrite",
    "Batch",
    "CommitResult",
    "CursorState",
    "EvalRow",
    "EventFilter",
    "EventReader",
    "EventRow",
    "GapMarker",
    "OpenNotice",
    "RejectedRow",
    "RowSegment",
    "Severity",
    "StoreWriter",
    "StoredAlert",
    "StoredEvent",
    "StoredGap",
    "StoredRejected",
    "WatermarkMoved",
    "open_reader",
]
