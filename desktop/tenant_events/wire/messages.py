"""The three stream message kinds and the one function that decodes an SSE frame into them.

On the wire the kind travels in the SSE `event:` field and the JSON `data:` has no `type`; like the vendor's
client libraries we copy the event name into `type` and validate the union discriminated on it
(docs/event-stream.md "Frames", "Message kinds").

    StreamMessage = EventMessage      type ∈ the 22 event types, offset, event (Envelope)
                  | OffsetOnlyMessage type "offset-only", offset              (heartbeat, cursor only)
                  | ErrorMessage      type "error", error {code, message, offset?}   (stream closes after)
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Annotated, Any, Final, Literal

import orjson
from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    StringConstraints,
    Tag,
    TypeAdapter,
    ValidationError,
    model_validator,
)

from tenant_events.wire.envelope import Envelope
from tenant_events.wire.event_types import EVENT_TYPE_NAMES, EventType

MAX_OFFSET_LENGTH: Final = 1024  # docs/event-stream.md "Limits": `from` is at most 1024 characters
OFFSET_ONLY: Final = "offset-only"
ERROR: Final = "error"

Offset = Annotated[str, StringConstraints(min_length=1, max_length=MAX_OFFSET_LENGTH)]


class StreamErrorCode(StrEnum):
    """In-stream error codes the real service documents (docs/event-stream.md "Errors")."""

    INVALID_CURSOR = "invalid_cursor"
    CURSOR_EXPIRED = "cursor_expired"
    TIMEOUT = "timeout"
    PAYLOAD_TOO_LARGE = "payload_too_large"
    PROCESSING_ERROR = "processing_error"
    CONNECTION_TIMEOUT = "connection_timeout"


class ErrorDetail(BaseModel):
    """Error detail of an in-stream error. The contract does not list its fields; the OAS gives these three.

    `code` stays a plain string: an unknown code must still reach the user, not fail validation.
    """

    model_config = ConfigDict(extra="ignore", frozen=True)

    code: Annotated[str, StringConstraints(min_length=1, max_length=128)]
    message: Annotated[str, StringConstraints(max_length=4096)] = ""
    offset: Offset | None = None

    @property
    def known_code(self) -> StreamErrorCode | None:
        """The code as a known enum member, or None for a code this client has not seen documented."""
        try:
            return StreamErrorCode(self.code)
        except ValueError:
            return None


class EventMessage(BaseModel):
    """An event and the cursor just after it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: EventType
    offset: Offset
    event: Envelope

    @model_validator(mode="after")
    def _type_matches_envelope(self) -> EventMessage:
        # The envelope's type must equal the type of the enclosing message.
        if self.event.type != self.type:
            raise ValueError(
                f"event.type {self.event.type.value!r} differs from the message type {self.type.value!r}"
            )
        return self


class OffsetOnlyMessage(BaseModel):
    """A heartbeat that advances the cursor without an event."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["offset-only"]
    offset: Offset


class ErrorMessage(BaseModel):
    """An error inside an open stream; the server closes the stream after it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["error"]
    error: ErrorDetail


def _kind(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    if kind in (OFFSET_ONLY, ERROR):
        return str(kind)
    return "event"


StreamMessage = Annotated[
    Annotated[EventMessage, Tag("event")]
    | Annotated[OffsetOnlyMessage, Tag(OFFSET_ONLY)]
    | Annotated[ErrorMessage, Tag(ERROR)],
    Discriminator(_kind),
]
STREAM_MESSAGE: Final[TypeAdapter[EventMessage | OffsetOnlyMessage | ErrorMessage]] = TypeAdapter(
    StreamMessage
)

EVENT_MESSAGE: Final[TypeAdapter[EventMessage]] = TypeAdapter(EventMessage)
# The core validator itself for the hot path: TypeAdapter.validate_python's Python wrapper costs ~0.25 µs an event.
_validate_event: Final[Callable[[Any], EventMessage]] = EVENT_MESSAGE.validator.validate_python


class MessageRejected(ValueError):
    """A frame that is not a valid stream message. `reason` names the offending field; `offset` is kept if readable."""

    def __init__(self, reason: str, offset: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.offset = offset


def describe_validation_error(exc: ValidationError) -> str:
    """One line naming each offending field by its dotted path, e.g. `event.id: String should match pattern …`."""
    parts = [
        f"{_field_path(err['loc']) or '(message)'}: {err['msg']}" for err in exc.errors(include_url=False)[:3]
    ]
    more = exc.error_count() - len(parts)
    return "; ".join(parts) + (f" (+{more} more)" if more > 0 else "")


def _field_path(loc: tuple[int | str, ...]) -> str:
    # The discriminator puts its tag ("event", "offset-only", "error") first in the path; drop it.
    path = list(loc)
    if len(path) > 1 and path[0] in ("event", OFFSET_ONLY, ERROR):
        path = path[1:]
    return ".".join(str(p) for p in path)


def decode_frame(event: str, data: str | bytes) -> EventMessage | OffsetOnlyMessage | ErrorMessage:
    """Decode one SSE frame (its `event:` name and `data:` text) into a stream message.

    Raises MessageRejected with the field named; never anything else for bad input.
    """
    return decode_frame_timed(event, data)[0]


def decode_frame_timed(
    event: str, data: str | bytes
) -> tuple[EventMessage | OffsetOnlyMessage | ErrorMessage, str | None]:
    """`decode_frame`, plus an event's `time` text exactly as received (None for the other kinds).

    The store keeps that text when it is already the canonical UTC form, instead of formatting the parsed
    datetime again: the ingest path's single most expensive step after validation (store/records.py).
    """
    try:
        payload = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise MessageRejected(f"data: not valid JSON ({exc.msg} at position {exc.pos})") from None
    if not isinstance(payload, dict):
        raise MessageRejected(f"data: expected a JSON object, got {type(payload).__name__}")
    offset = payload.get("offset")
    readable_offset = offset if isinstance(offset, str) and 0 < len(offset) <= MAX_OFFSET_LENGTH else None
    if not event:
        raise MessageRejected("event: the SSE frame names no message kind", readable_offset)
    if event not in EVENT_TYPE_NAMES and event not in (OFFSET_ONLY, ERROR):
        raise MessageRejected(f"type: unknown message kind {event[:64]!r}", readable_offset)
    if "type" in payload and payload["type"] != event:
        raise MessageRejected(
            f"type: data says {str(payload['type'])[:64]!r} but the SSE event is {event!r}", readable_offset
        )
    payload["type"] = event
    if event in EVENT_TYPE_NAMES:
        try:  # the common case straight to its model: the union's Python discriminator costs ~1 µs an event
            message = _validate_event(payload)
        except ValidationError:
            pass  # validated again below through the union, whose error paths name the fields as documented
        else:
            moment = payload["event"]["time"]  # validated; a number (lax: unix time) has no text to keep
            return message, moment if isinstance(moment, str) else None
    try:
        return STREAM_MESSAGE.validate_python(payload), None
    except ValidationError as exc:
        raise MessageRejected(describe_validation_error(exc), readable_offset) from None


def encode_message(message: EventMessage | OffsetOnlyMessage | ErrorMessage) -> dict[str, Any]:
    """The message as a JSON-ready dict with `type` (the export format)."""
    return message.model_dump(mode="json", exclude_none=True)
