"""A stored event as text to copy or export: pretty JSON, one JSONL line, and its `data` object.

A stored event's raw text is the stream message's `data:` JSON as received (`{"offset", "event"}`); the JSONL
line adds the message `type` back, so a copied line and an exported file read the same as `tenant-events export`.
"""

from __future__ import annotations

import json
from typing import Any

import orjson


def message_of(raw: str | None) -> Any:
    """The parsed message, or the raw text itself when it is not JSON (shown as it is, never dropped)."""
    if raw is None:
        return None
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return raw


def pretty(raw: str | None) -> str:
    message = message_of(raw)
    return "" if message is None else json.dumps(message, indent=2, ensure_ascii=False)


def jsonl_line(event_type: str, offset: str, raw: str) -> str:
    """`{"type", "offset", "event"}` and a newline: one line of a JSONL export."""
    message = message_of(raw)
    if not isinstance(message, dict):
        return json.dumps({"type": event_type, "offset": offset, "raw": raw}, ensure_ascii=False) + "\n"
    line = {"type": event_type, "offset": message.get("offset", offset), "event": message.get("event")}
    return json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n"


def data_of(raw: str | None) -> dict[str, Any] | None:
    """The event's `data` object (`event.data` of the message), or None."""
    message = message_of(raw)
    event = message.get("event") if isinstance(message, dict) else None
    data = event.get("data") if isinstance(event, dict) else None
    return data if isinstance(data, dict) else None
