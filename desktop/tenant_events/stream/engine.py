"""The stream engine: follows one tenant's `GET {base_url}/events`, commits events + cursor, reconnects.

One engine per tenant profile; several run side by side on one loop (each has its own HTTP client). The
flow per connection: build the request from the stored cursor → read SSE frames (sse_decoder.py) → decode each
with the wire models → add to the pending `Batch` → hand the batch to the store's writer thread when it holds
1,000 events or is 100 ms old. The cursor only moves inside those batches, so a crash at any moment resumes
from a cursor whose events are all stored. Every way a connection ends maps to a named state (states.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Final

import httpx
from httpx_sse import SSEError

from tenant_events.errors import SignInRequired, StorageError
from tenant_events.http import stream_client, untrusted_certificate
from tenant_events.store import Batch, CommitResult, EventRow, GapMarker, RejectedRow
from tenant_events.stream.backoff import Backoff
from tenant_events.stream.request import (
    bad_parameter,
    error_text,
    events_url,
    query_params,
    rate_limit_until,
    request_headers,
    resume_timestamp,
)
from tenant_events.stream.sink import BatchSink
from tenant_events.stream.sse_decoder import SSEDecoder, SSEFrame
from tenant_events.stream.states import EngineStats, StateChange, StreamState, state_line
from tenant_events.stream.tokens import TokenProvider
from tenant_events.wire import (
    ErrorMessage,
    EventMessage,
    MessageRejected,
    StreamErrorCode,
    decode_frame_timed,
)

log = logging.getLogger(__name__)

MAX_REJECTED_RAW: Final = 64 * 1024
# Batches handed to the writer but not yet committed (pipelining, bounded; each batch at most batch_max_bytes).
# Measured: 12 was no faster than 4 (and since then WAL checkpoints left the writer thread: store/checkpoint.py).
_IN_FLIGHT: Final = 4


@dataclass(frozen=True)
class EngineConfig:
    """How one engine follows one tenant; defaults suit the real service."""

    base_url: str
    event_types: tuple[str, ...] = ()
    from_timestamp: str | None = None  # spec 000: initial query only, when no cursor exists
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


@dataclass
class _Outcome:
    """How a connection ended and what to do next."""

    state: StreamState
    message: str
    reason: str
    delay: float = 0.0  # seconds before the next attempt; <0 means "use the backoff"
    terminal: bool = False
    progress: bool = False


class StreamEngine:
    """Follows one tenant's stream until stopped or a terminal state; observe with the `on_*` callback lists."""

    def __init__(
        self,
        config: EngineConfig,
        tokens: TokenProvider,
        writer: BatchSink,
        *,
        client_factory: Callable[[], httpx.AsyncClient] = stream_client,
    ) -> None:
        self.config = config
        self._tokens = tokens
        self._writer = writer
        self._client_factory = client_factory
        self.on_state: list[Callable[[StateChange], None]] = []
        self.on_commit: list[Callable[[CommitResult], None]] = []
        self.stats = EngineStats()
        self.state = StateChange(StreamState.STOPPED, "not started")
        self._backoff = Backoff(base=config.backoff_base, cap=config.backoff_cap)
        self._busy_backoff = Backoff.busy(config.busy_backoff_base, config.busy_backoff_cap)
        self._cursor: str | None = None
        self._last_event_time: str | None = None
        self._from_timestamp = config.from_timestamp
        self._pending = Batch()
        self._pending_bytes = 0
        self._pending_since: float | None = None
        self._batch_open = asyncio.Event()  # a batch started: the flush timer sleeps on this while idle
        self._inflight: deque[asyncio.Future[CommitResult]] = deque()
        self._wake = asyncio.Event()
        self._paused = False
        self._stopping = False
        self._interrupt: str | None = None
        self._conn_task: asyncio.Task[_Outcome] | None = None
        self._refreshed = False
        self._progress = False  # the current connection delivered at least one message
        self._rate_window: deque[tuple[float, int]] = deque(maxlen=50)
        self._storage_error: StorageError | None = None

    # -- control (call from the engine's loop) ------------------------------------------------------------
    def pause(self) -> None:
        self._paused = True
        self._interrupt_connection("paused")

    def resume(self) -> None:
        self._paused = False
        self._wake.set()

    def nudge(self) -> None:
        """Reconnect now (resume from sleep, network back); skips any backoff wait."""
        self._interrupt_connection("nudged")

    def stop(self) -> None:
        self._stopping = True
        self._interrupt_connection("stopped")

    def _interrupt_connection(self, why: str) -> None:
        self._interrupt = why
        self._wake.set()
        if self._conn_task is not None and not self._conn_task.done():
            self._conn_task.cancel()

    # -- main loop ----------------------------------------------------------------------------------------
    async def run(self) -> StateChange:
        """Follow the stream; returns the terminal state change (STOPPED, SIGNED_OUT or ERROR)."""
        stored = await asyncio.to_thread(self._writer.cursor_state)
        self._cursor, self._last_event_time = stored.offset, stored.last_event_time
        self.stats.last_event_time, self.stats.cursor_updated_at = stored.last_event_time, stored.updated_at
        self.stats.duplicates_dropped = await asyncio.to_thread(self._writer.duplicates_total)
        flusher = asyncio.create_task(self._flush_timer(), name=f"flush-{self.config.name}")
        try:
            async with self._client_factory() as client:
                return await self._loop(client)
        finally:
            flusher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await flusher
            with contextlib.suppress(StorageError):
                await self._drain()
            if not self.state.state.terminal:
                self._emit(StreamState.STOPPED, "stopped", "stopped")

    async def _loop(self, client: httpx.AsyncClient) -> StateChange:
        while True:
            if self._stopping:
                return self._emit(StreamState.STOPPED, "stopped", "stopped")
            if self._paused:
                self._emit(StreamState.PAUSED, "paused", "paused")
                self._wake.clear()
                while self._paused and not self._stopping:
                    await self._wake.wait()
                    self._wake.clear()
                continue
            self._interrupt = None
            self._emit(StreamState.CONNECTING, f"connecting to {self.config.base_url}", "connecting")
            self._conn_task = asyncio.create_task(
                self._connect_once(client), name=f"stream-{self.config.name}"
            )
            try:
                outcome = await self._conn_task
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    raise
                outcome = _Outcome(StreamState.CONNECTING, f"reconnecting ({self._interrupt})", "interrupted")
            except StorageError as exc:
                outcome = _Outcome(StreamState.PAUSED, str(exc), "storage")
            except Exception as exc:  # a bug: keep the traceback, keep following the stream (with backoff)
                log.exception("%s: unexpected error while streaming", self.config.name)
                outcome = _Outcome(StreamState.RECONNECTING, f"internal error: {type(exc).__name__}: {exc}",
                                   "internal_error", -1)  # fmt: skip
            finally:
                self._conn_task = None
            try:
                await self._drain()
            except StorageError as exc:
                outcome = _Outcome(StreamState.PAUSED, str(exc), "storage")
            if outcome.reason == "storage":
                await self._wait_for_storage(outcome.message)
                continue
            if outcome.progress:
                self._backoff.reset()
                self._busy_backoff.reset()
            if outcome.terminal:
                return self._emit(outcome.state, outcome.message, outcome.reason)
            if outcome.reason == "interrupted":
                continue
            self.stats.reconnects += 1
            delay = self._backoff.next_delay() if outcome.delay < 0 else outcome.delay
            if delay <= 0:
                self._emit(outcome.state, outcome.message, outcome.reason)
                continue
            # the wait is told from retry_at (states.state_line), not baked into the message
            self._emit(outcome.state, outcome.message, outcome.reason, time.time() + delay)
            await self._sleep(delay)

    async def _wait_for_storage(self, why: str) -> None:
        """A commit failed (disk full, read-only, I/O error): pause, then resume from the STORED cursor — the
        batches after the failed one were refused by the writer, so nothing past that cursor is stored — and
        let the server send the rest again (issue 9: the stream pauses and resumes when space returns)."""
        for future in self._inflight:
            with contextlib.suppress(Exception):
                await future
        self._inflight.clear()
        self._pending, self._pending_since, self._storage_error = Batch(), None, None
        self._pending_bytes = 0
        delay = self.config.storage_retry
        self._emit(StreamState.PAUSED, why, "storage", time.time() + delay)
        await self._sleep(delay)
        try:
            stored = await asyncio.to_thread(self._writer.resume_after_failure)
        except StorageError as exc:  # the database cannot even be read: the next round says so again
            self._storage_error = exc
            return
        self._cursor, self._last_event_time = stored.offset, stored.last_event_time

    async def _sleep(self, delay: float) -> None:
        """Wait `delay` seconds unless nudged, paused or stopped."""
        self._wake.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), timeout=delay)

    # -- one connection ----------------------------------------------------------------------------------
    async def _connect_once(self, client: httpx.AsyncClient) -> _Outcome:
        try:
            token = await self._tokens.access_token()
        except SignInRequired as exc:
            return _Outcome(StreamState.SIGNED_OUT, str(exc), "signed_out", terminal=True)
        cursor = self._cursor
        params = query_params(self.config.event_types, cursor, None if cursor else self._from_timestamp)
        stall = self.config.stall_timeout
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
            return _Outcome(StreamState.RECONNECTING, f"the stream went quiet for {stall:g} s (stalled)", "stalled",
                            0.0, progress=self._progress)  # fmt: skip
        except (httpx.HTTPError, SSEError) as exc:
            reason = untrusted_certificate(exc)
            if reason is not None:  # not a flaky network: retrying cannot prove the server's identity
                return _Outcome(
                    StreamState.ERROR,
                    f"the tenant's TLS certificate is not trusted ({reason}) — check the domain, or set "
                    "SSL_CERT_FILE to your organisation's CA bundle",
                    "untrusted_certificate",
                    terminal=True,
                )
            return _Outcome(
                StreamState.RECONNECTING,
                f"network error: {type(exc).__name__}: {exc}".rstrip(": "),
                "network",
                -1,
            )

    async def _http_error(self, response: httpx.Response, body: bytes) -> _Outcome:
        status, text = response.status_code, error_text(response, body)
        if status == 401:
            if self._refreshed:
                return _Outcome(StreamState.SIGNED_OUT, f"the tenant rejected the token twice ({text})",
                                "unauthorized", terminal=True)  # fmt: skip
            self._refreshed = True
            try:
                await self._tokens.refresh()
            except SignInRequired as exc:
                return _Outcome(StreamState.SIGNED_OUT, str(exc), "signed_out", terminal=True)
            return _Outcome(StreamState.CONNECTING, "access token refreshed after 401", "token_refreshed")
        if status == 403:
            lowered = text.lower()
            if "concurrent" in lowered or "connections" in lowered:
                return _Outcome(
                    StreamState.TOO_MANY_CONNECTIONS,  # said as "another connection is still open" (states.py)
                    "the tenant allows only a few event streams at once; if this lasts, close other apps or CLI "
                    f"sessions following it ({text})",
                    "too_many_connections",
                    self._busy_backoff.next_delay(),
                )
            return _Outcome(StreamState.ERROR, f"access denied: the token lacks the read:events scope ({text})",
                            "missing_scope", terminal=True)  # fmt: skip
        if status == 429:
            until = rate_limit_until(response)
            shown = time.strftime("%H:%M:%S", time.localtime(until))
            return _Outcome(StreamState.RATE_LIMITED, f"rate limited until {shown}", "rate_limited",
                            max(0.0, until - time.time()))  # fmt: skip
        if status == 410:
            return await self._cursor_expired(text)
        if status == 400:
            return _Outcome(StreamState.ERROR, f"the tenant refused {bad_parameter(text)}: {text}", "bad_request",
                            terminal=True)  # fmt: skip
        if status == 404:
            return _Outcome(
                StreamState.ERROR,
                f"not found: {events_url(self.config.base_url)} — check the tenant domain or base URL",
                "not_found",
                terminal=True,
            )
        if status >= 500:
            return _Outcome(StreamState.RECONNECTING, f"server error {status}: {text}", "server_error", -1)
        return _Outcome(StreamState.ERROR, f"unexpected HTTP {status}: {text}", "http_error", terminal=True)

    async def _cursor_expired(self, detail: str) -> _Outcome:
        """410 / cursor_expired: resume by time from the newest stored event, mark a possible gap."""
        resume = resume_timestamp(self._last_event_time, self.config.gap_margin)
        self._pending.gap = GapMarker(
            f"cursor expired: {detail}", resumed_from=resume, lost_cursor=self._cursor
        )
        self._pending.cursor = None
        self._cursor, self._from_timestamp = None, resume
        await self._flush()
        return _Outcome(
            StreamState.CONNECTING,
            f"the stored position expired; resuming from {resume} — some events may be missing",
            "cursor_expired",
        )

    async def _read(self, response: httpx.Response, watchdog: asyncio.Timeout) -> _Outcome:
        content_type = response.headers.get("content-type", "").partition(";")[0]
        if "text/event-stream" not in content_type:  # the check httpx-sse's EventSource makes
            raise SSEError(
                f"Expected response header Content-Type to contain 'text/event-stream', got {content_type!r}"
            )
        loop = asyncio.get_running_loop()
        stall = self.config.stall_timeout
        batch_max, batch_bytes = self.config.batch_max_events, self.config.batch_max_bytes
        # Frame size cap: the data limit plus room for the `event:`/`id:` lines around it (D4: memory bounded).
        decoder = SSEDecoder(self.config.max_data_bytes + 4096)
        retry = decoder.retry
        self._emit(StreamState.CATCHING_UP if self._cursor else StreamState.LIVE, "connected", "connected")
        chunks = response.aiter_bytes()
        try:
            last_kick = loop.time()
            watchdog.reschedule(last_kick + stall)
            async for chunk in chunks:
                now = loop.time()  # any byte, comment keep-alives included, proves the stream alive (issue 5)
                if now - last_kick > 0.25:  # rescheduling per chunk would cost more than it saves
                    watchdog.reschedule(now + stall)
                    last_kick = now
                frames = decoder.feed(chunk)
                if decoder.retry != retry:
                    retry = decoder.retry
                    if retry is not None:
                        self._backoff.floor = min(retry / 1000.0, self.config.backoff_cap)
                for sse in frames:
                    self._progress = True
                    if not sse.data and not sse.oversized:
                        continue  # `data:` with nothing after it: no message to decode (as with httpx-sse)
                    error = self._take_frame(sse)  # sync: no coroutine per frame
                    if error is not None:
                        ended = await self._stream_error(error)
                        ended.progress = True
                        return ended
                    self._pending_bytes += len(sse.data)
                    if len(self._pending.events) >= batch_max or self._pending_bytes >= batch_bytes:
                        self._set_live(catching_up=True)
                        await self._flush()
        except httpx.HTTPError as exc:
            return _Outcome(StreamState.RECONNECTING, f"connection lost: {type(exc).__name__}", "network", -1,
                            progress=self._progress)  # fmt: skip
        finally:
            await _close_reading(response, chunks)
        progress = self._progress
        if not progress:
            return _Outcome(
                StreamState.RECONNECTING, "the stream closed before sending anything", "empty_stream", -1
            )
        # EOF: the service rotates connections every few minutes (event-stream.md §2) — routine.
        return _Outcome(
            StreamState.CONNECTING, "the server rotated the connection", "rotation", progress=True
        )

    def _take_frame(self, sse: SSEFrame) -> ErrorMessage | None:
        """Decode one frame into the pending batch (or its rejects); an in-stream error is returned to handle."""
        received = time.time()
        name, data, sse_id = sse.event, sse.data, sse.id
        size = sse.oversized or len(data)
        if size > self.config.max_data_bytes:  # `data` is then only the frame's start (sse_decoder.py)
            self._reject(name, sse_id or None, f"data: {size} bytes exceeds the {self.config.max_data_bytes}"
                         " byte limit (frame discarded, its start kept)" if sse.oversized else
                         f"data: {size} bytes exceeds the {self.config.max_data_bytes} byte limit",
                         data, received)  # fmt: skip
            return None
        try:
            message, time_text = decode_frame_timed(name, data)
        except MessageRejected as exc:
            self._reject(name, exc.offset or sse_id or None, exc.reason, data, received)
            return None
        pending = self._pending
        if isinstance(message, EventMessage):
            if self._pending_since is None:
                self._pending_since = received
                self._batch_open.set()
            row = EventRow.from_message(message, data, received, time_text)
            pending.events.append(row)
            pending.cursor = message.offset
            if pending.last_event_time is None or row.time > pending.last_event_time:
                pending.last_event_time = row.time
            return None
        if isinstance(message, ErrorMessage):
            return message
        pending.cursor = message.offset  # offset-only heartbeat (spec 000): the cursor moves, nothing else
        if self._pending_since is None:
            self._pending_since = received
            self._batch_open.set()
        self._set_live(catching_up=False)
        return None

    async def _stream_error(self, message: ErrorMessage) -> _Outcome:
        err = message.error
        if err.offset:
            self._pending.cursor = err.offset  # "can be used to resume" (event-stream.md §6)
        await self._flush()
        code = err.known_code
        text = f"{err.code}: {err.message}" if err.message else err.code
        if code is StreamErrorCode.CONNECTION_TIMEOUT:
            return _Outcome(StreamState.CONNECTING, "the server rotated the connection", "rotation")
        if code in (StreamErrorCode.CURSOR_EXPIRED, StreamErrorCode.INVALID_CURSOR):
            return await self._cursor_expired(text)
        return _Outcome(StreamState.RECONNECTING, f"the server ended the stream ({text})", "stream_error", -1)

    def _reject(self, name: str, offset: str | None, reason: str, data: str, received: float) -> None:
        log.warning("%s: rejected a frame at offset %s: %s; data starts %r", self.config.name, offset, reason,
                    data[:120])  # fmt: skip
        self._pending.rejected.append(
            RejectedRow(name or "", offset, reason, data[:MAX_REJECTED_RAW], received)
        )
        if offset:
            self._pending.cursor = offset  # kept in `rejected`, so the cursor may move past it
        if self._pending_since is None:
            self._pending_since = received
            self._batch_open.set()

    def _set_live(self, *, catching_up: bool) -> None:
        want = StreamState.CATCHING_UP if catching_up else StreamState.LIVE
        if self.state.state is not want:
            self._emit(want, "catching up on stored events" if catching_up else "live", want.name.lower())

    # -- batches ------------------------------------------------------------------------------------------
    async def _flush_timer(self) -> None:
        """Commits a batch that is older than batch_max_delay even when no further frame arrives."""
        delay = self.config.batch_max_delay
        while True:
            if self._pending_since is None:  # idle: no wake-ups until a frame opens a batch (idle CPU)
                await self._batch_open.wait()
                self._batch_open.clear()
            await asyncio.sleep(delay / 2)
            if self._pending_since is not None and time.time() - self._pending_since >= delay:
                try:
                    await self._flush()
                except StorageError as exc:
                    self._storage_error = exc
                    self._interrupt_connection("storage error")  # the loop pauses; keep ticking for after

    async def _flush(self) -> None:
        """Hand the pending batch to the writer (in order) and keep at most _IN_FLIGHT uncommitted."""
        batch, self._pending, self._pending_since, self._pending_bytes = self._pending, Batch(), None, 0
        if batch.empty:
            return
        future = asyncio.wrap_future(self._writer.submit(batch))
        future.add_done_callback(self._committed)
        self._inflight.append(future)
        while len(self._inflight) >= _IN_FLIGHT:
            await self._inflight.popleft()
        if self._storage_error is not None:
            raise self._storage_error

    async def _drain(self) -> None:
        """Commit everything pending and wait for it (before reconnecting and at shutdown)."""
        await self._flush()
        while self._inflight:
            await self._inflight.popleft()
        if self._storage_error is not None:
            raise self._storage_error

    def _committed(self, future: asyncio.Future[CommitResult]) -> None:
        if future.cancelled():
            return
        exc = future.exception()
        if exc is not None:
            self._storage_error = exc if isinstance(exc, StorageError) else StorageError(str(exc))
            log.error("%s: could not store a batch: %s", self.config.name, exc)
            return
        result = future.result()
        now = time.time()
        stats = self.stats
        stats.events_stored += result.inserted
        stats.duplicates_dropped += result.duplicates
        stats.rejected += result.rejected
        if result.cursor is not None:
            self._cursor = result.cursor
            stats.cursor_updated_at = now
        if result.last_event_time and (
            not self._last_event_time or result.last_event_time > self._last_event_time
        ):
            self._last_event_time = stats.last_event_time = result.last_event_time
        self._rate_window.append((now, result.inserted))
        if len(self._rate_window) > 1:
            span = now - self._rate_window[0][0]
            count = sum(n for _, n in list(self._rate_window)[1:])
            stats.events_per_second = count / span if span > 0 else 0.0
        for callback in list(self.on_commit):
            callback(result)

    def _emit(
        self, state: StreamState, message: str, reason: str, retry_at: float | None = None
    ) -> StateChange:
        change = StateChange(state, message, reason, retry_at)
        self.state = change
        log.info("%s: %s", self.config.name, state_line(change))
        for callback in list(self.on_state):
            callback(change)
        return change


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
