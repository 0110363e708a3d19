"""What the collector puts on the hub besides the events themselves: pydantic models of the JSON payloads.

An event travels as its SSE `data:` JSON, byte for byte (viewers validate it with the same wire models as a
direct stream). Rejected frames and gap markers travel as the records below; the key-value buckets hold a
`CursorRecord` and a `LeaseRecord`. Unknown fields are ignored, so a newer collector can add some.
"""

from __future__ import annotations

import hashlib

from pydantic import BaseModel, ConfigDict

from tenant_events.store.records import GapMarker, RejectedRow


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    def to_bytes(self) -> bytes:
        return self.model_dump_json().encode()


class RejectedPayload(_Record):
    """A frame that failed validation, kept raw (never dropped silently) on `…rejected`."""

    event_name: str
    offset: str | None
    reason: str
    raw: str
    received_at: float

    @classmethod
    def of(cls, row: RejectedRow) -> RejectedPayload:
        return cls(
            event_name=row.event_name,
            offset=row.offset,
            reason=row.reason,
            raw=row.raw,
            received_at=row.received_at,
        )

    def row(self) -> RejectedRow:
        return RejectedRow(self.event_name, self.offset, self.reason, self.raw, self.received_at)

    def message_id(self) -> str:
        """The same frame replayed after a crash gets the same id, so JetStream keeps it once."""
        digest = hashlib.sha256(f"{self.event_name}\0{self.offset}\0{self.raw}".encode()).hexdigest()
        return f"rejected:{digest[:40]}"


class GapPayload(_Record):
    """Events may be missing here: the tenant's cursor expired and the collector resumed by time."""

    reason: str
    resumed_from: str | None
    lost_cursor: str | None
    created_at: float

    @classmethod
    def of(cls, gap: GapMarker) -> GapPayload:
        return cls(
            reason=gap.reason,
            resumed_from=gap.resumed_from,
            lost_cursor=gap.lost_cursor,
            created_at=gap.created_at,
        )

    def marker(self) -> GapMarker:
        return GapMarker(self.reason, self.resumed_from, self.lost_cursor, self.created_at)

    def message_id(self) -> str:
        return f"gap:{self.lost_cursor}:{self.resumed_from}"


class CursorRecord(_Record):
    """The tenant's SSE cursor after every event acknowledged by the hub, and the newest event time (for 410)."""

    offset: str | None = None
    last_event_time: str | None = None
    updated_at: float | None = None


class LeaseRecord(_Record):
    """Which collector holds the tenant connection; the bucket's max age is the lease's time to live."""

    holder: str
    host: str
    pid: int
    acquired_at: float
