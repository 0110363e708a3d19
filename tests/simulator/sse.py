"""A tiny raw SSE reader for simulator tests: frames as dicts of field → value, read from a real socket.

Deliberately independent of the client's stream/ and of httpx-sse, so framing itself is under test.
"""

from __future__ import annotations

from typing import Any

import httpx
import orjson


def parse_frames(raw: bytes) -> list[dict[str, str]]:
    """Split complete frames (blank-line separated); comments are kept under the key ':'."""
    frames = []
    for block in raw.replace(b"\r\n", b"\n").split(b"\n\n"):
        if not block:
            continue
        frame: dict[str, str] = {}
        for line in block.split(b"\n"):
            name, _, value = line.decode().partition(":")
            value = value[1:] if value.startswith(" ") else value
            frame[name if name else ":"] = frame.get(name, "") + value if name == "data" else value
        frames.append(frame)
    return frames


def read_frames(
    client: httpx.Client,
    url: str,
    *,
    token: str,
    until: Any,
    params: Any = None,
    headers: dict[str, str] | None = None,
    limit: int = 100_000,
) -> tuple[httpx.Response, list[dict[str, str]]]:
    """GET url and read frames until `until(frames)` is true or the stream ends."""
    hdrs = {"Authorization": f"Bearer {token}", "Accept": "text/event-stream", **(headers or {})}
    frames: list[dict[str, str]] = []
    with client.stream("GET", url, params=params, headers=hdrs) as response:
        if response.status_code != 200:
            response.read()
            return response, []
        buf = b""
        for chunk in response.iter_bytes():
            buf += chunk
            head, sep, buf = buf.rpartition(b"\n\n")
            if sep:
                frames.extend(parse_frames(head + sep))
                if until(frames) or len(frames) >= limit:
                    break
            else:
                buf = head + buf
    return response, frames


def events(frames: list[dict[str, str]]) -> list[dict[str, Any]]:
    """The event messages among frames, as {type, offset, event} like a client library builds them."""
    out = []
    for f in frames:
        if "event" in f and f["event"] not in ("offset-only", "error"):
            out.append({"type": f["event"], "id": f.get("id"), **orjson.loads(f["data"])})
    return out


def kinds(frames: list[dict[str, str]]) -> list[str]:
    return [f.get("event", ":" if ":" in f else "retry") for f in frames]


def until_events(n: int) -> Any:
    """An `until` for read_frames: true once n event messages arrived (counted incrementally, no JSON)."""
    state = {"seen": 0, "checked": 0}

    def check(frames: list[dict[str, str]]) -> bool:
        for frame in frames[state["checked"] :]:
            if frame.get("event") not in (None, "offset-only", "error"):
                state["seen"] += 1
        state["checked"] = len(frames)
        return state["seen"] >= n

    return check
