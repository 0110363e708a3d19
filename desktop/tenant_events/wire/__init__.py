"""Pydantic models of the event stream (stream messages, envelope; docs/event-stream.md) and of the token replies; no I/O."""

from tenant_events.wire.envelope import Envelope
from tenant_events.wire.event_types import ALL_EVENT_TYPES, EVENT_TYPE_NAMES, EventType
from tenant_events.wire.messages import (
    ErrorDetail,
    ErrorMessage,
    EventMessage,
    MessageRejected,
    OffsetOnlyMessage,
    StreamErrorCode,
    decode_frame,
    decode_frame_timed,
    encode_message,
)
from tenant_events.wire.payloads import object_id, summarize

__all__ = [
    "ALL_EVENT_TYPES",
    "EVENT_TYPE_NAMES",
    "Envelope",
    "ErrorDetail",
    "ErrorMessage",
    "EventMessage",
    "EventType",
    "MessageRejected",
    "OffsetOnlyMessage",
    "StreamErrorCode",
    "decode_frame",
    "decode_frame_timed",
    "encode_message",
    "object_id",
    "summarize",
]
