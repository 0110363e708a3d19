"""Names on the hub for one tenant: the JetStream stream, its subjects and the key-value buckets.

    stream   TENANT_EVENTS_<TENANT>           subjects tenant-events.<tenant>.>
               tenant-events.<tenant>.<event type>   one event; payload = its `data:` JSON as received
               tenant-events.<tenant>.rejected       a frame that failed validation (messages.RejectedPayload)
               tenant-events.<tenant>.gap            events may be missing here (messages.GapPayload)
    buckets  TENANT_EVENTS_<TENANT>_CURSOR    key `cursor`: the SSE cursor after everything acknowledged
             TENANT_EVENTS_<TENANT>_LEASE     key `leader`: the collector that streams (expires with the lease)

Every event type name has a dot (wire/event_types.py), so the one-token `rejected` and `gap` are never an event's subject.
A viewer's local cursor is the stream sequence of the last message it stored, kept as `hub:<sequence>`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from tenant_events.settings.hubs import (
    check_hub_tenant as check_hub_tenant,
)  # the hub names its tenants by it

PREFIX: Final = "tenant-events"
CURSOR_KEY: Final = "cursor"
LEASE_KEY: Final = "leader"
REJECTED: Final = "rejected"
GAP: Final = "gap"
_POSITION_PREFIX: Final = "hub:"


@dataclass(frozen=True)
class HubNames:
    """Every name one tenant uses on the hub."""

    tenant: str

    def __post_init__(self) -> None:
        check_hub_tenant(self.tenant)

    @property
    def _upper(self) -> str:
        return self.tenant.upper().replace("-", "_")  # slugs hold no "_", so this cannot merge two tenants

    @property
    def stream(self) -> str:
        return f"TENANT_EVENTS_{self._upper}"

    @property
    def cursor_bucket(self) -> str:
        return f"TENANT_EVENTS_{self._upper}_CURSOR"

    @property
    def lease_bucket(self) -> str:
        return f"TENANT_EVENTS_{self._upper}_LEASE"

    @property
    def _base(self) -> str:
        return f"{PREFIX}.{self.tenant}."

    @property
    def all_subjects(self) -> str:
        return self._base + ">"

    def event_subject(self, event_type: str) -> str:
        return self._base + event_type

    @property
    def rejected_subject(self) -> str:
        return self._base + REJECTED

    @property
    def gap_subject(self) -> str:
        return self._base + GAP

    def filter_subjects(self, event_types: Iterable[str]) -> list[str]:
        """What a viewer reads: every subject, or the chosen types plus rejected frames and gaps."""
        chosen = sorted(set(event_types))
        if not chosen:
            return [self.all_subjects]
        return [*(self.event_subject(t) for t in chosen), self.rejected_subject, self.gap_subject]

    def kind_of(self, subject: str) -> str:
        """The event type, `rejected` or `gap` a subject of this tenant carries ('' for a foreign subject)."""
        return subject[len(self._base) :] if subject.startswith(self._base) else ""


def position_text(sequence: int) -> str:
    """A viewer's stored cursor for a stream sequence."""
    return f"{_POSITION_PREFIX}{sequence}"


def parse_position(text: str | None) -> int:
    """The stream sequence in a stored viewer cursor (0 when none is stored yet).

    ValueError when the database holds a tenant's own cursor: it was filled from the tenant, not from a hub.
    """
    if not text:
        return 0
    if text.startswith(_POSITION_PREFIX) and text[len(_POSITION_PREFIX) :].isdigit():
        return int(text[len(_POSITION_PREFIX) :])
    raise ValueError(f"the stored cursor {text[:40]!r} is a tenant's, not a hub position")
