"""The stream engine: follows one tenant's `GET {base_url}/events`, commits events + cursor, reconnects.

One engine per tenant profile; several run side by side on one loop (each has its own HTTP client). The
flow per connection: build the request from the stored cursor → read SSE frames (sse_decoder.py) → decode each
with the wire models → add to the pending batch (batching.py) → hand the batch to the store's writer thread
when it holds 1,000 events or is 100 ms old. The cursor only moves inside those batches, so a crash at any
moment resumes from a cursor whose events are all stored. Every way a connection ends is an `Outcome` with a
named state and `Reason` (outcomes.py); the loop around the connections is follow_loop.py.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import timedelta

import httpx
from httpx_sse import SSEError

from tenant_events.errors import SignInBusy, SignInRequired
from tenant_events.http import stream_client, untrusted_certificate
from tenant_events.server_text import shown
from tenant_events.store import CommitResult, CursorState, EventRow, GapMarker, RejectedRow
from tenant_events.stream.backoff import Backoff, bounded
from tenant_events.stream.batching import MAX_REJECTED_RAW
from tenant_events.stream.event_rows import event_row, numbers_plain
from tenant_events.stream.follow_loop import FollowLoop
from tenant_events.stream.outcomes import (
    MIN_INTERVAL,
    USE_BACKOFF,
    Outcome,
    Reason,
    Reconnects,
    connection_lost,
    rate_limited,
    refused,
    sign_in_busy,
)
from tenant_events.stream.request import (
    error_text,
    events_url,
    query_params,
    rate_limit_until,
    request_headers,
    resume_timestamp,
)
from tenant_events.stream.sink import BatchSink
from tenant_events.stream.sse_decoder import SSEDecoder, SSEFrame
from tenant_events.stream.tokens import TokenProvider
from tenant_events.values.stream_states import StateChange, StreamState
from tenant_events.wire import (
    ErrorMessage,
    EventMessage,
    MessageRejected,
    StreamErrorCode,
    decode_frame_timed,
)

log = logging.getLogger(__name__)

MIN_STALL_TIMEOUT = 0.5  # seconds; a shorter stall timeout is taken as this
FLOWING_S = 2.0  # seconds since a batch last filled within which a heartbeat does not mean live


@dataclass(frozen=True)
class EngineConfig:
    """How one engine follows one tenant; defaults suit the real service."""

    base_url: str
    event_types: tuple[str, ...] = ()
    from_timestamp: str | None = None  # initial query only, when no cursor exists
    name: str = "tenant"
    stall_timeout: float = 90.0  # no message for this long → reconnect (a few heartbeats)
    batch_max_events: int = 1000
    # of `data:` text: large events make smaller batches, so the batches in flight stay bounded in memory
    batch_max_bytes: int = 4 * 1024 * 1024
    batch_max_delay: float = 0.1
    backoff_base: float = 0.5
    backoff_cap: float = 30.0
    # 403 too many connections: after a crash the old stream still counts until the server notices (backoff.py)
    busy_backoff_base: float = 3.0
    busy_backoff_cap: float = 60.0
    gap_margin: timedelta = timedelta(minutes=5)
    max_data_bytes: int = 1024 * 1024
    storage_retry: float = 5.0  # seconds between attempts while the database cannot be written
    # The least time between the starts of two connections, whatever ended the first (outcomes.py); tests that
    # drive hundreds of deliberately short connections lower it, never below a twentieth of a second.
    min_interval: float = MIN_INTERVAL


class StreamEngine(FollowLoop):
    """Follows one tenant's stream until stopped or a terminal state; observe with the `on_*` callback lists."""

    def __init__(
        self,
        config: EngineConfig,
        tokens: TokenProvider,
        writer: BatchSink,
        *,
        client_factory: Callable[[], httpx.AsyncClient] = stream_client,
    ) -> None:
        reconnects = Reconnects(
            Backoff(base=config.backoff_base, cap=config.backoff_cap),
            Backoff.busy(config.busy_backoff_base, config.busy_backoff_cap),
            bounded(config.min_interval, default=MIN_INTERVAL, low=0.05, high=60.0),
        )
        super().__init__(
            config.name,
            writer,
            reconnects,
            max_events=config.batch_max_events,
            max_delay=config.batch_max_delay,
            max_bytes=config.batch_max_bytes,
            storage_retry=config.storage_retry,
        )
        self.config = config
        # Whatever the caller passed: 0, a negative or NaN would make every connection "stall" at once.
        self._stall = bounded(config.stall_timeout, default=90.0, low=MIN_STALL_TIMEOUT, high=86400.0)
        self._tokens = tokens
        self._client_factory = client_factory
        self._client: httpx.AsyncClient | None = None
        self._cursor: str | None = None
        self._last_event_time: str | None = None
        self._from_timestamp = config.from_timestamp
        self._refreshed = False
        self._progress = False  # the current connection delivered at least one message
        # when a batch last filled: within FLOWING_S a backlog still flows, and the service sends its heartbeats
        # at regular intervals through one, so such a heartbeat does not mean live (the state flipped every beat)
        self._filled_at = float("-inf")
        self._batches.on_kept = self._kept

    # -- the follower's part -------------------------------------------------------------------------------
    def _resume_from(self, stored: CursorState) -> None:
        self._cursor, self._last_event_time = stored.offset, stored.last_event_time

    async def _follow(self) -> StateChange:
        async with self._client_factory() as client:
            self._client = client
            return await self._loop()

    def _connecting_text(self) -> str:
        return f"connecting to {self.config.base_url}"

    def _kept(self, result: CommitResult) -> None:
        if result.cursor is not None:
            self._cursor = result.cursor
        if result.last_event_time and (
            not self._last_event_time or result.last_event_time > self._last_event_time
        ):
            self._last_event_time = result.last_event_time

    # -- one connection ------------------------------------------------------------------------------------
    async def _attempt(self) -> Outcome:
        client = self._client
        assert client is not None, "attempts run inside _follow()"
        try:
            token = await self._tokens.access_token()
        except SignInBusy as exc:
            return sign_in_busy(exc.waiting)
        except SignInRequired as exc:
            return Outcome(StreamState.SIGNED_OUT, str(exc), Reason.SIGNED_OUT, terminal=True)
        cursor = self._cursor
        params = query_params(self.config.event_types, cursor, None if cursor else self._from_timestamp)
        stall = self._stall
        self._progress = False
        try:
            # The watchdog covers the wait for response headers too: the stream client has no read timeout.
            async with (
                asyncio.timeout(stall) as watchdog,
                client.stream(
                    "GET",
                    events_url(self.config.base_url),
                    params=httpx.QueryParams(params),
                    headers=request_headers(token, cursor),
                ) as response,
            ):
                if response.status_code != 200:
                    body = await response.aread()
                    return await self._http_error(response, body[:4096])
                self._refreshed = False
                return await self._read(response, watchdog)
        except TimeoutError:
            return Outcome(
                StreamState.RECONNECTING,
                f"the stream went quiet for {stall:g} s (stalled)",
                Reason.STALLED,
                0.0,
                progress=self._progress,
            )
        except (httpx.HTTPError, SSEError) as exc:
            reason = untrusted_certificate(exc)
            if reason is not None:  # not a flaky network: retrying cannot prove the server's identity
                return Outcome(
                    StreamState.ERROR,
                    f"the tenant's TLS certificate is not trusted ({reason}) — check the domain, or set "
                    "SSL_CERT_FILE to your organisation's CA bundle",
                    Reason.UNTRUSTED_CERTIFICATE,
                    terminal=True,
                )
            return Outcome(
                StreamState.RECONNECTING,
                shown(f"network error: {type(exc).__name__}: {exc}".rstrip(": ")),
                Reason.NETWORK,
                USE_BACKOFF,
            )

    async def _http_error(self, response: httpx.Response, body: bytes) -> Outcome:
        status, text = response.status_code, error_text(response, body)
        if status == 401:
            if self._refreshed:
                return Outcome(
                    StreamState.SIGNED_OUT,
                    f"the tenant rejected the token twice ({text})",
                    Reason.UNAUTHORIZED,
                    terminal=True,
                )
            self._refreshed = True
            try:
                await self._tokens.refresh()
            except SignInBusy as exc:
                self._refreshed = False  # no refresh was made: the next 401 asks for one again
                return sign_in_busy(exc.waiting)
            except SignInRequired as exc:
                return Outcome(StreamState.SIGNED_OUT, str(exc), Reason.SIGNED_OUT, terminal=True)
            return Outcome(StreamState.CONNECTING, "access token refreshed after 401", Reason.TOKEN_REFRESHED)
        if status == 429:
            return rate_limited(rate_limit_until(response))
        if status == 410:
            return await self._cursor_expired(text)
        return refused(status, text, self.config.base_url, self._reconnects.busy)

    async def _cursor_expired(self, detail: str) -> Outcome:
        """410 / cursor_expired: resume by time from the newest stored event, mark a possible gap."""
        resume = resume_timestamp(self._last_event_time, self.config.gap_margin)
        pending = self._batches.pending
        pending.gap = GapMarker(f"cursor expired: {detail}", resumed_from=resume, lost_cursor=self._cursor)
        pending.cursor = None
        self._cursor, self._from_timestamp = None, resume
        await self._batches.flush()
        return Outcome(
            StreamState.CONNECTING,
            f"the stored position expired; resuming from {resume} — some events may be missing",
            Reason.CURSOR_EXPIRED,
        )

    async def _read(self, response: httpx.Response, watchdog: asyncio.Timeout) -> Outcome:
        content_type = response.headers.get("content-type", "").partition(";")[0]
        if "text/event-stream" not in content_type:  # the check httpx-sse's EventSource makes
            raise SSEError(
                f"Expected response header Content-Type to contain 'text/event-stream', got {content_type!r}"
            )
        loop = asyncio.get_running_loop()
        stall, batches = self._stall, self._batches
        # Frame size cap: the data limit plus room for the `event:`/`id:` lines around it (memory stays bounded).
        decoder = SSEDecoder(self.config.max_data_bytes + 4096)
        retry = decoder.retry
        self._emit(
            StreamState.CATCHING_UP if self._cursor else StreamState.LIVE, "connected", Reason.CONNECTED
        )
        chunks = response.aiter_bytes()
        limit, add_event = self.config.max_data_bytes, batches.add_event
        try:
            last_kick = loop.time()
            watchdog.reschedule(last_kick + stall)
            async for chunk in chunks:
                now = loop.time()  # any byte, keep-alive comments too, proves the stream alive
                if now - last_kick > 0.25:  # rescheduling per chunk would cost more than it saves
                    watchdog.reschedule(now + stall)
                    last_kick = now
                frames = decoder.feed(chunk)
                received = time.time()  # (one read: its frames arrived together)
                # One look at the numbers of the whole read instead of one per frame (event_rows.py)
                plain = numbers_plain(decoder.span) if frames else False
                if decoder.retry != retry:
                    retry = decoder.retry
                    if retry is not None:
                        self._reconnects.backoff.floor = min(retry / 1000.0, self.config.backoff_cap)
                self._progress = self._progress or bool(frames)
                for sse in frames:
                    name, data, _, oversized = sse
                    if not data and not oversized:
                        continue  # `data:` with nothing after it: no message to decode (as with httpx-sse)
                    # The common case in one pass (event_rows.py), inline: this loop runs for every event
                    row = None if oversized or len(data) > limit else event_row(name, data, received, plain)
                    if row is not None:
                        add_event(row, row.offset, received)
                    elif (error := self._take_frame(sse, received)) is not None:  # sync: no coroutine a frame
                        ended = await self._stream_error(error)
                        ended.progress = True
                        return ended
                    batches.pending_bytes += len(data)
                    if batches.full:
                        self._filled_at = received
                        self._set_live(catching_up=True)
                        await batches.flush()
        except httpx.HTTPError as exc:
            return connection_lost(exc, progress=self._progress)
        finally:
            await _close_reading(response, chunks)
        if not self._progress:
            return Outcome(
                StreamState.RECONNECTING,
                "the stream closed before sending anything",
                Reason.EMPTY_STREAM,
                USE_BACKOFF,
            )
        # EOF: the service rotates connections every few minutes (docs/event-stream.md "Reconnecting") — routine.
        return Outcome(
            StreamState.CONNECTING, "the server rotated the connection", Reason.ROTATION, progress=True
        )

    def _take_frame(self, sse: SSEFrame, received: float) -> ErrorMessage | None:
        """A frame the one pass left (_read): through the wire models into the pending batch (or its rejects); an
        in-stream error is returned to handle."""
        name, data, sse_id = sse.event, sse.data, sse.id
        size = sse.oversized or len(data)
        limit = self.config.max_data_bytes
        if size > limit:  # `data` is then only the frame's start (sse_decoder.py)
            self._reject(
                name,
                sse_id or None,
                f"data: {size} bytes exceeds the {limit} byte limit (frame discarded, its start kept)"
                if sse.oversized
                else f"data: {size} bytes exceeds the {limit} byte limit",
                data,
                received,
            )
            return None
        try:
            message, time_text = decode_frame_timed(name, data)
        except MessageRejected as exc:
            self._reject(name, exc.offset or sse_id or None, exc.reason, data, received)
            return None
        if isinstance(message, EventMessage):
            row = EventRow.from_message(message, data, received, time_text)
            self._batches.add_event(row, message.offset, received)
            return None
        if isinstance(message, ErrorMessage):
            return message
        self._batches.move_cursor(message.offset, received)  # an offset-only heartbeat
        if received - self._filled_at >= FLOWING_S:
            self._set_live(catching_up=False)
        return None

    async def _stream_error(self, message: ErrorMessage) -> Outcome:
        err = message.error
        if err.offset:
            self._batches.pending.cursor = err.offset  # kept to resume from (docs/event-stream.md "Errors")
        await self._batches.flush()
        code = err.known_code
        text = shown(f"{err.code}: {err.message}" if err.message else err.code)
        if code is StreamErrorCode.CONNECTION_TIMEOUT:
            return Outcome(StreamState.CONNECTING, "the server rotated the connection", Reason.ROTATION)
        if code in (StreamErrorCode.CURSOR_EXPIRED, StreamErrorCode.INVALID_CURSOR):
            return await self._cursor_expired(text)
        return Outcome(
            StreamState.RECONNECTING,
            f"the server ended the stream ({text})",
            Reason.STREAM_ERROR,
            USE_BACKOFF,
        )

    def _reject(self, name: str, offset: str | None, reason: str, data: str, received: float) -> None:
        reason = shown(reason)  # it may quote the frame: its field names, its event name
        log.warning(
            "%s: rejected a frame at offset %s: %s; data starts %r",
            self.config.name,
            shown(offset, 120),
            reason,
            data[:120],
        )
        row = RejectedRow(name or "", offset, reason, data[:MAX_REJECTED_RAW], received)
        self._batches.add_rejected(row, offset, received)  # kept in `rejected`: the cursor may move past it

    def _set_live(self, *, catching_up: bool) -> None:
        want = StreamState.CATCHING_UP if catching_up else StreamState.LIVE
        if self.state.state is not want:
            reason = Reason.CATCHING_UP if catching_up else Reason.LIVE
            self._emit(want, "catching up on stored events" if catching_up else "live", reason)


async def _close_reading(response: httpx.Response, chunks: AsyncIterator[bytes]) -> None:
    """Close the connection, then the generators reading it, here on the loop.

    Left to the garbage collector, the chain of async generators under `aiter_bytes()` (httpx, then httpcore) was
    finalised wherever and whenever it was collected: under the window's Qt loop (qasync installs no async-generator
    hooks) on any thread, where httpcore's clean-up found "no running event loop" and Python printed "Exception
    ignored in …" at every rotation and at quit. Closing the response first leaves those generators nothing to
    await when they close."""
    try:
        await response.aclose()
    finally:
        await chunks.aclose()  # type: ignore[attr-defined]  # an async generator; typed by httpx as an iterator


__all__ = ["EngineConfig", "StreamEngine"]
