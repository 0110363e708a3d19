"""SSE frames other than events: preamble, heartbeats, keep-alives, errors and the malformed ones the fault
knobs inject. Event frames are rendered once in event_log.py.

Framing per docs/event-stream.md "Frames": `event:` = message kind, `id:` = offset, `data:` = JSON without `type`.
"""

from __future__ import annotations

from typing import Any

import orjson

KEEPALIVE = b": keep-alive\n\n"
ERROR_MESSAGES = {
    "invalid_cursor": "The cursor is not valid for this stream.",
    "cursor_expired": "Cursor points to data no longer available in the stream.",
    "timeout": "The stream timed out.",
    "payload_too_large": "The event payload is too large to deliver.",
    "processing_error": "An error occurred while processing the stream.",
    "connection_timeout": "Connection closed for load balancing; reconnect with the last offset to resume.",
}


def preamble(retry_ms: int) -> bytes:
    """`:connected` comment and the reconnection time, as the service's own example starts (docs/event-stream.md "Frames")."""
    return b":connected\nretry: %d\n\n" % retry_ms


def offset_only(offset: str) -> bytes:
    off = offset.encode("ascii")
    return b'event: offset-only\nid: %s\ndata: {"offset":"%s"}\n\n' % (off, off)


def error(code: str, offset: str | None) -> bytes:
    """In-stream error `{error:{code, message, offset?}}`; the stream closes after it (docs/event-stream.md "Errors")."""
    detail: dict[str, str] = {"code": code, "message": ERROR_MESSAGES.get(code, code)}
    head = b"event: error\n"
    if offset is not None:
        detail["offset"] = offset
        head += b"id: %s\n" % offset.encode("ascii")
    return head + b"data: " + orjson.dumps({"error": detail}) + b"\n\n"


def malformed(kind: str, offset: str, sample_frame: bytes | None, oversized_bytes: int) -> bytes:
    """One broken message of `kind` (faults.MALFORMED_KINDS), carrying `offset` where the kind allows."""
    off = offset.encode("ascii")
    if kind == "bad_json":
        return b'event: user.created\nid: %s\ndata: {"offset":"%s","event":{"id": evt_\n\n' % (off, off)
    if kind == "unknown_kind":
        return b'event: user.exploded\nid: %s\ndata: {"offset":"%s","event":{}}\n\n' % (off, off)
    if kind == "oversized":
        blob = b"x" * oversized_bytes
        return b'event: user.updated\nid: %s\ndata: {"offset":"%s","event":{"blob":"%s"}}\n\n' % (
            off,
            off,
            blob,
        )
    # bad_envelope: a real event whose envelope breaks the envelope rules (id too short, unknown property).
    data = sample_frame.split(b"\ndata: ", 1)[1].rstrip(b"\n") if sample_frame else b""
    message: dict[str, Any] = orjson.loads(data) if data else {"event": {"type": "user.created", "data": {}}}
    envelope = message["event"]
    envelope["id"] = "evt_short"
    envelope["unexpected"] = True
    event_type = str(envelope.get("type", "user.created")).encode("ascii")
    body = orjson.dumps({"offset": offset, "event": envelope})
    return b"event: %s\nid: %s\ndata: %s\n\n" % (event_type, off, body)
