"""The `from_timestamp` query parameter's one accepted form: where a stream with no cursor starts."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Final

MAX_FROM_TIMESTAMP: Final = 20  # docs/event-stream.md "Limits": `from_timestamp` is at most 20 characters


def format_from_timestamp(moment: datetime) -> str:
    """RFC 3339 in the only form that fits 20 characters: `YYYY-MM-DDTHH:MM:SSZ` (docs/event-stream.md "Request")."""
    text = moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert len(text) <= MAX_FROM_TIMESTAMP
    return text
