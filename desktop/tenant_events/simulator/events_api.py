"""`GET /api/v2/events`: the SSE event stream (docs/event-stream.md), checked in the order the live service does.

Request checks, each with the contract's status and message (docs/event-stream.md "Errors"): bearer token (401/403), request rate
(429 + X-RateLimit-*), query string (400: unknown parameter, `from` > 1024, `from_timestamp` > 20 or not
RFC 3339, unsupported `event_type`, `from` with `from_timestamp`), cursor (400 bad format, 410 expired),
concurrent connections (403). Then the stream (docs/event-stream.md "Frames"): preamble with `retry:`, event frames in
batches, offset-only heartbeats every `heartbeat` s, `: keep-alive` comments when idle, and an in-stream
`connection_timeout` error before closing every `rotate_after` s.

A raw ASGI endpoint rather than sse-starlette: it writes pre-rendered frames in ~256 KiB batches and notices
a client leaving at once (needed for the connection count); bench/simulator.py measures the rate.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import re
import time
from datetime import datetime
from typing import Any
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.types import Message, Receive, Scope, Send

from tenant_events.simulator import cursor, frames
from tenant_events.simulator.event_log import CursorExpired
from tenant_events.simulator.event_types import TYPE_INDEX
from tenant_events.simulator.faults import StreamPlan
from tenant_events.simulator.http_errors import json_error
from tenant_events.simulator.state import SimState
from tenant_events.simulator.tokens import TokenRejected

log = logging.getLogger(__name__)
MAX_FROM_TIMESTAMP = 20  # docs/event-stream.md "Limits"
_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")
_ALLOWED_PARAMS = ("from", "from_timestamp", "event_type")


class DropConnection(Exception):
    """Raised to make uvicorn abort the TCP connection mid-body (the drop_mid_frame fault)."""


class BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class EventsEndpoint:
    """ASGI app for the events route."""

    def __init__(self, state: SimState) -> None:
        self.state = state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        st = self.state
        st.counters.requests += 1
        rate_headers: dict[str, str] = {}
        try:
            if request.method not in ("GET", "HEAD"):
                raise BadRequest(405, f"Method {request.method} is not allowed on /events; use GET.")
            if st.faults.take("http_5xx"):
                raise BadRequest(
                    st.faults.http_5xx_status, "The service is temporarily unavailable (simulated)."
                )
            claims = self._authenticate(request)
            allowed, rate_headers = st.rate_check(str(claims.get("azp", "")))
            if st.faults.take("http_429") or not allowed:
                rate_headers.setdefault("Retry-After", "1")
                raise BadRequest(
                    429,
                    "Too many requests. Check the X-RateLimit-Limit, X-RateLimit-Remaining "
                    "and X-RateLimit-Reset headers.",
                )
            start_seq, mask = self._parse(request)
            if st.counters.connections >= st.config.max_connections:
                raise BadRequest(
                    403,
                    "Maximum concurrent event stream connections reached. Please close existing connections.",
                )
        except BadRequest as exc:
            st.counters.status[exc.status] = st.counters.status.get(exc.status, 0) + 1
            await json_error(exc.status, exc.message, rate_headers)(scope, receive, send)
            return
        st.counters.status[200] = st.counters.status.get(200, 0) + 1
        await self._serve(scope, receive, send, start_seq, mask, rate_headers)

    # ------------------------------------------------------------------ checks
    def _authenticate(self, request: Request) -> dict[str, Any]:
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise BadRequest(401, "Invalid token. Send the access token as 'Authorization: Bearer <token>'.")
        try:
            return self.state.token_service.check_events_access(token.strip())
        except TokenRejected as exc:
            raise BadRequest(exc.status, exc.message) from exc

    def _parse(self, request: Request) -> tuple[int, bytes | None]:
        """(position to resume after, type mask or None for all types)."""
        try:
            pairs = parse_qsl(
                request.scope.get("query_string", b"").decode("latin-1"),
                keep_blank_values=True,
                strict_parsing=False,
                errors="strict",
            )
        except (UnicodeDecodeError, ValueError) as exc:
            raise BadRequest(400, f"Invalid request query string. {exc}") from exc
        values: dict[str, list[str]] = collections.defaultdict(list)
        for key, value in pairs:
            if key not in _ALLOWED_PARAMS:
                raise BadRequest(
                    400,
                    f"Invalid request query string. Unknown parameter {key!r}; "
                    f"allowed: {', '.join(_ALLOWED_PARAMS)}.",
                )
            values[key].append(value)
        for key in ("from", "from_timestamp"):
            if len(values.get(key, [])) > 1:
                raise BadRequest(400, f"Invalid request query string. {key!r} may be given only once.")
        mask: bytearray | None = None
        for name in values.get("event_type", []):
            if name not in TYPE_INDEX:
                raise BadRequest(400, f"Unsupported event type: {name!r}.")
            mask = mask or bytearray(len(TYPE_INDEX))
            mask[TYPE_INDEX[name]] = 1
        from_ = values.get("from", [None])[0]
        from_ts = values.get("from_timestamp", [None])[0]
        if from_ is not None and len(from_) > cursor.MAX_CURSOR_LENGTH:
            raise BadRequest(
                400,
                f"Invalid request query string. 'from' is {len(from_)} characters; "
                f"at most {cursor.MAX_CURSOR_LENGTH} are allowed.",
            )
        if from_ts is not None:
            if len(from_ts) > MAX_FROM_TIMESTAMP:
                raise BadRequest(
                    400,
                    f"Invalid request query string. 'from_timestamp' {from_ts!r} is longer than "
                    f"{MAX_FROM_TIMESTAMP} characters; use YYYY-MM-DDTHH:MM:SSZ.",
                )
            if not _RFC3339.match(from_ts):
                raise BadRequest(
                    400,
                    f"Invalid request query string. 'from_timestamp' {from_ts!r} is not an "
                    "RFC 3339 date-time such as 2025-01-31T12:00:00Z.",
                )
        # Last-Event-ID wins over `from` (docs/event-stream.md "Request"); `from` and `from_timestamp` are mutually
        # exclusive (docs/event-stream.md "Request").
        last_event_id = request.headers.get("last-event-id", "").strip()
        text = last_event_id or from_
        if from_ is not None and from_ts is not None and not last_event_id:
            raise BadRequest(
                400,
                "Invalid request query string. 'from' and 'from_timestamp' are mutually "
                "exclusive; send only the cursor.",
            )
        log_ = self.state.log
        if text is not None:
            try:
                return log_.resolve(text), bytes(mask) if mask else None
            except cursor.CursorError as exc:
                raise BadRequest(400, "Invalid cursor format.") from exc
            except CursorExpired as exc:
                raise BadRequest(410, "Cursor points to data no longer available in the stream.") from exc
        if from_ts is not None:
            try:
                ts = datetime.fromisoformat(from_ts.upper().replace("Z", "+00:00")).timestamp()
            except ValueError as exc:
                raise BadRequest(
                    400, f"Invalid request query string. 'from_timestamp' {from_ts!r}: {exc}."
                ) from exc
            return log_.seq_before_time(ts), bytes(mask) if mask else None
        return log_.last_seq, bytes(mask) if mask else None  # no cursor: from now

    # ------------------------------------------------------------------ streaming
    async def _serve(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        start_seq: int,
        mask: bytes | None,
        headers: dict[str, str],
    ) -> None:
        st = self.state
        st.counters.connections += 1
        st.counters.connections_total += 1
        plan = StreamPlan.take(st.faults)
        raw_headers = [
            (b"content-type", b"text/event-stream; charset=utf-8"),
            (b"cache-control", b"no-cache"),
            (b"x-accel-buffering", b"no"),
        ]
        raw_headers += [(k.lower().encode(), v.encode()) for k, v in headers.items()]
        writer: asyncio.Task[None] | None = None
        try:
            await send({"type": "http.response.start", "status": 200, "headers": raw_headers})
            if scope.get("method") == "HEAD":
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                return
            writer = asyncio.create_task(self._stream(send, start_seq, mask, plan))
            st.streams.add(writer)
            listener = asyncio.create_task(_wait_disconnect(receive))
            try:
                done, _ = await asyncio.wait({writer, listener}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in (writer, listener):
                    task.cancel()
                await asyncio.gather(writer, listener, return_exceptions=True)
            if writer in done:
                error = None if writer.cancelled() else writer.exception()
                if error is not None:
                    raise error
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            if writer is not None:
                st.streams.discard(writer)
            st.counters.connections -= 1

    async def _stream(self, send: Send, pos: int, mask: bytes | None, plan: StreamPlan) -> None:
        st, cfg = self.state, self.state.config
        body = {"type": "http.response.body", "body": b"", "more_body": True}

        async def write(data: bytes) -> None:
            await send({**body, "body": data})

        await write(frames.preamble(cfg.retry_ms))
        if plan.stall:
            await asyncio.Event().wait()  # silence until the client leaves (its read timeout)
        now = time.monotonic()
        rotate_at = now + cfg.rotate_after if cfg.rotate_after else float("inf")
        next_heartbeat, last_write = now + cfg.heartbeat, now
        delivered = 0
        recent: collections.deque[bytes] = collections.deque(maxlen=4)
        while True:
            try:
                batch, pos = st.log.frames_after(pos, mask, cfg.chunk_bytes)
            except CursorExpired:
                await write(frames.error("cursor_expired", None))
                return
            if batch:
                if plan.any or st.faults.slow_drip or st.faults.duplicate_every:
                    done = await self._write_with_faults(write, batch, delivered, plan, recent)
                    if done:
                        return
                else:
                    await write(b"".join(batch))
                delivered += len(batch)
                last_write = time.monotonic()
                await asyncio.sleep(0)  # let other connections and the generator run between batches
            now = time.monotonic()
            if now >= rotate_at:
                await write(frames.error("connection_timeout", st.log.offset(pos)))
                return
            if plan.error is not None and delivered >= st.faults.fault_after:
                await write(frames.error(plan.error, st.log.offset(pos)))
                return
            if now >= next_heartbeat:
                await write(frames.offset_only(st.log.offset(pos)))
                next_heartbeat, last_write = now + cfg.heartbeat, now
            elif now - last_write >= cfg.keepalive:
                await write(frames.KEEPALIVE)
                last_write = now
            if pos < st.log.last_seq:
                continue
            wake = min(next_heartbeat, last_write + cfg.keepalive, rotate_at)
            await st.log.wait_beyond(pos, max(0.0, wake - time.monotonic()))

    async def _write_with_faults(
        self,
        write: Any,
        batch: list[bytes],
        delivered: int,
        plan: StreamPlan,
        recent: collections.deque[bytes],
    ) -> bool:
        """Frame-by-frame writing with the active faults; True when the stream must end."""
        st = self.state
        faults = st.faults
        for i, frame in enumerate(batch, start=delivered):
            if plan.drop and i >= faults.fault_after:
                await write(frame[: len(frame) // 2])
                raise DropConnection("simulated drop in the middle of a frame")
            # Errors and malformed messages carry the position *before* this frame: nothing is skipped.
            before = st.log.offset(st.log.resolve(_frame_offset(frame)) - 1)
            if plan.malformed is not None and i >= faults.fault_after:
                await write(frames.malformed(plan.malformed, before, frame, faults.oversized_bytes))
                plan.malformed = None
            if plan.error is not None and i >= faults.fault_after:
                await write(frames.error(plan.error, before))
                return True
            if faults.slow_drip:
                half = len(frame) // 2
                await write(frame[:half])
                await asyncio.sleep(faults.slow_drip)
                await write(frame[half:])
                await asyncio.sleep(faults.slow_drip)
            else:
                await write(frame)
                # a turn of the loop between frames: a client gone mid-batch is noticed (the server then drops
                # what follows) instead of asyncio's transport being written to after its socket failed
                await asyncio.sleep(0)
            recent.append(frame)
            if faults.duplicate_every and (i + 1) % faults.duplicate_every == 0 and len(recent) >= 2:
                await write(recent[-2])  # at-least-once: an earlier event again, same id and offset
        return False


def _frame_offset(frame: bytes) -> str:
    return frame.split(b"\nid: ", 1)[1].split(b"\n", 1)[0].decode("ascii")


async def _wait_disconnect(receive: Receive) -> None:
    while True:
        message: Message = await receive()
        if message["type"] == "http.disconnect":
            return
