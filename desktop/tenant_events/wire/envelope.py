"""The CloudEvents envelope carried in an event message (docs/event-stream.md "Envelope").

The object is closed: no properties other than those listed. Two deliberate tolerances keep real
events from being dropped (docs/event-stream.md "Quirks"): ids of 16 *or* 22 characters (the contract says 16, the live
service sends 22), and the live service's `a0`-prefixed extension names accepted beside the contract's neutral
`x` prefix. Everything else that breaks the contract is rejected with the field named.
"""

from __future__ import annotations

from typing import Annotated, Any, Final

from pydantic import AliasChoices, AwareDatetime, BaseModel, ConfigDict, Field, StringConstraints

from tenant_events.wire.event_types import EventType

# Unanchored in the OAS; anchored here so trailing junk is rejected. 16 per the contract, 22 as the service sends.
EVENT_ID_PATTERN: Final = r"^evt_(?:[a-zA-Z0-9]{16}|[a-zA-Z0-9]{22})$"
STREAM_ID_PATTERN: Final = r"^est_(?:[a-zA-Z0-9]{16}|[a-zA-Z0-9]{22})$"
TENANT_PATTERN: Final = r"^[a-z0-9][-a-z0-9]{1,62}[a-z0-9]$"
# `urn:<service>:<tenant>.<domain>`; a bare `urn:<service>:` has been seen live (docs/event-stream.md "Quirks").
SOURCE_PATTERN: Final = r"^urn:[A-Za-z0-9][A-Za-z0-9-]*:[^\s]*$"
PURPOSE_PATTERN: Final = r"^[a-z][a-z0-9_-]{0,31}$"

EventId = Annotated[str, StringConstraints(pattern=EVENT_ID_PATTERN)]
StreamId = Annotated[str, StringConstraints(pattern=STREAM_ID_PATTERN)]
TenantId = Annotated[str, StringConstraints(min_length=3, max_length=63, pattern=TENANT_PATTERN)]


class Envelope(BaseModel):
    """One event as the tenant recorded it; `time` is when it physically occurred."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, serialize_by_alias=False)

    specversion: Annotated[str, StringConstraints(min_length=1, max_length=16)]
    type: EventType
    source: Annotated[str, StringConstraints(max_length=512, pattern=SOURCE_PATTERN)]
    id: EventId
    time: AwareDatetime
    data: dict[str, Any]
    xtenant: TenantId = Field(validation_alias=AliasChoices("xtenant", "a0tenant"))
    xstream: StreamId = Field(validation_alias=AliasChoices("xstream", "a0stream"))
    # The contract lists no allowed values; the live service only uses "test" (docs/event-stream.md "Envelope").
    xpurpose: Annotated[str, StringConstraints(pattern=PURPOSE_PATTERN)] | None = Field(
        default=None, validation_alias=AliasChoices("xpurpose", "a0purpose")
    )

    @property
    def is_test(self) -> bool:
        """True for events the tenant marked as test sends (`xpurpose: test`)."""
        return self.xpurpose == "test"
