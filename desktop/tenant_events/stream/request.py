"""The `GET {base_url}/events` request (docs/event-stream.md "Request") and the reading of its error responses."""

from __future__ import annotations

import contextlib
import email.utils
import math
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import orjson

from tenant_events.http import Response
from tenant_events.server_text import shown
from tenant_events.wire.from_timestamp import format_from_timestamp


def events_url(base_url: str) -> str:
    return base_url.rstrip("/") + "/events"


def query_params(
    event_types: Sequence[str], cursor: str | None, from_timestamp: str | None
) -> list[tuple[str, str | int | float | bool | None]]:
    """`event_type` repeated (form style, exploded), then `from` or, with no cursor, `from_timestamp`."""
    params: list[tuple[str, str | int | float | bool | None]] = [("event_type", t) for t in event_types]
    if cursor:
        params.append(("from", cursor))  # httpx percent-encodes it (offsets look like base64: + / =)
    elif from_timestamp:
        params.append(("from_timestamp", from_timestamp))
    return params


def request_headers(token: str, cursor: str | None) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {token}", "Accept": "text/event-stream", "Cache-Control": "no-store"}
    if cursor:
        headers["Last-Event-ID"] = cursor  # it wins over `from` (docs/event-stream.md "Request")
    return headers


def resume_timestamp(last_event_time: str | None, margin: timedelta, now: datetime | None = None) -> str:
    """Where to resume after the cursor expired: the newest stored event time minus `margin` (dedupe absorbs it)."""
    if last_event_time:
        base = datetime.fromisoformat(last_event_time.replace("Z", "+00:00"))
    else:
        base = now or datetime.now(UTC)
    return format_from_timestamp(base - margin)


def error_text(response: Response, body: bytes) -> str:
    """The server's message from an error body (`message`, `error_description` or `error`), else the body;
    escaped and cut (server_text.py), since it is shown as it came."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        data = None
    if isinstance(data, dict):
        for key in ("message", "error_description", "error"):
            value = data.get(key)
            if isinstance(value, str) and value:
                return shown(value)
    text = body.decode("utf-8", "replace").strip()
    return shown(text or response.reason_phrase or f"HTTP {response.status_code}")


def rate_limit_until(response: Response, now: float | None = None) -> float:
    """Epoch seconds when a 429 lifts: `Retry-After` (s or HTTP date, RFC 9110 §10.2.3) when sent, since it is
    the server's own answer; else `X-RateLimit-Reset` (epoch s, docs/event-stream.md "Errors"); else a minute. A
    value that is not a finite number (NaN, inf, 1e999) is no answer; the wait itself is bounded by
    `outcomes.rate_limited`."""
    now = time.time() if now is None else now
    retry_after = response.headers.get("Retry-After")
    if retry_after:
        seconds = _finite(retry_after)
        if seconds is not None:
            return now + max(0.0, seconds)
        with contextlib.suppress(TypeError, ValueError, OverflowError):
            return email.utils.parsedate_to_datetime(retry_after).timestamp()
    reset = _finite(response.headers.get("X-RateLimit-Reset") or "")
    if reset is not None:
        # Some services send seconds-to-wait rather than an epoch; a small number can only mean that.
        return reset if reset > 1e9 else now + max(0.0, reset)
    return now + 60.0


def _finite(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def bad_parameter(message: str) -> str:
    """Which request parameter a 400 is about, from the server's message (docs/event-stream.md "Errors")."""
    lowered = message.lower()
    if "cursor" in lowered:
        return "from (the stored cursor)"
    if "event type" in lowered or "event_type" in lowered:
        return "event_type"
    if "timestamp" in lowered:
        return "from_timestamp"
    return "the query string"
