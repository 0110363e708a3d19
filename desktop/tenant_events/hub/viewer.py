"""A viewer: follows one tenant through the hub into the local store, with the engine's states and backoff.

    CONNECTING ──consumer made──▶ CATCHING_UP ⇄ LIVE ──hub lost, stalled, 409──▶ RECONNECTING (backoff)
        ├─ hub unreachable / no stream yet ─▶ RECONNECTING (jittered backoff, as for the tenant)
        └─ credentials refused ─▶ SIGNED_OUT (terminal);  no read permission ─▶ ERROR (terminal)

Messages become the same `Batch`es the engine makes (events decoded by the same wire models, rejected frames,
gap markers) and go to the same `StoreWriter`, whose cursor here is the hub position (`hub:<stream sequence>`).
Everything downstream — tables, search, alerts, notifications, export — cannot tell a viewer from a tenant.
A batch is committed when it holds `batch_max_events`, when `batch_max_delay` passed, or at once when the hub
has nothing more waiting (so a live event reaches the table without the batching delay).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import nats.errors
import nats.js.errors
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription

from tenant_events.errors import StorageError
from tenant_events.hub.connection import HubOptions, HubRefused, HubUnavailable, connect, describe, is_refusal
from tenant_events.hub.consumer import Status, consumer_config, delivery, next_subject, pull_request
from tenant_events.hub.messages import GapPayload, RejectedPayload
from tenant_events.hub.subjects import GAP, REJECTED, HubNames, parse_position, position_text
from tenant_events.hub.viewer_batches import BatchKeeper
from tenant_events.store.records import CommitResult, EventRow, GapMarker, RejectedRow
from tenant_events.stream.backoff import Backoff
from tenant_events.stream.batching import MAX_REJECTED_RAW
from tenant_events.stream.sink import BatchSink
from tenant_events.stream.states import EngineStats, StateChange, StreamState
from tenant_events.wire import EventMessage, MessageRejected, decode_frame_timed

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ViewerConfig:
    """How one viewer reads one tenant from the hub."""

    hub: HubOptions
    names: HubNames
    event_types: tuple[str, ...] = ()
    name: str = "hub"
    pull_batch: int = 1000
    pull_expires: float = 10.0  # seconds one pull request waits on the server
    heartbeat: float = 1.0  # the server's idle heartbeat while a request waits
    stall_timeout: float = 5.0  # nothing, not even a heartbeat, for this long → a new read
    batch_max_events: int = 1000
    batch_max_delay: float = 0.1
    backoff_base: float = 0.5
    backoff_cap: float = 30.0
    storage_retry: float = 5.0


@dataclass
class _Outcome:
    state: StreamState
    message: str
    reason: str
    delay: float = 0.0  # <0: use the backoff
    terminal: bool = False
    progress: bool = False


class HubViewer:
    """`monitor.EventSource` reading from the hub; the monitor passes the tenant database's writer."""

    def __init__(self, config: ViewerConfig, writer: BatchSink) -> None:
        self.config = config
        self._writer = writer
        self.on_state: list[Callable[[StateChange], None]] = []
        self.on_commit: list[Callable[[CommitResult], None]] = []
        self.stats = EngineStats()
        self.state = StateChange(StreamState.STOPPED, "not started")
        self._batches = BatchKeeper(writer, self.stats, self.on_commit, name=config.name,
                                    max_events=config.batch_max_events, max_delay=config.batch_max_delay)  # fmt: skip
        self._batches.on_failure = lambda: self._interrupt_read("storage error")
        self._backoff = Backoff(base=config.backoff_base, cap=config.backoff_cap)
        self._position = 0  # stream sequence of the last message taken into a batch
        self._wake = asyncio.Event()
        self._paused = self._stopping = False
        self._read: asyncio.Task[_Outcome] | None = None
        self._interrupt: str | None = None

    # -- control ------------------------------------------------------------------------------------------
    def pause(self) -> None:
        self._paused = True
        self._interrupt_read("paused")

    def resume(self) -> None:
        self._paused = False
        self._wake.set()

    def nudge(self) -> None:
        self._interrupt_read("nudged")

    def stop(self) -> None:
        self._stopping = True
        self._interrupt_read("stopped")

    def _interrupt_read(self, why: str) -> None:
        self._interrupt = why
        self._wake.set()
        if self._read is not None and not self._read.done():
            self._read.cancel()

    # -- main loop ----------------------------------------------------------------------------------------
    async def run(self) -> StateChange:
        """Follow the hub until stopped or a terminal state; returns that state change."""
        stored = await asyncio.to_thread(self._writer.cursor_state)
        try:
            self._position = parse_position(stored.offset)
        except ValueError as exc:
            return self._emit(StreamState.ERROR, f"{exc}: this database was filled from the tenant itself; "
                              "give the hub profile another name", "not_a_hub_database")  # fmt: skip
        self.stats.last_event_time, self.stats.cursor_updated_at = stored.last_event_time, stored.updated_at
        self.stats.duplicates_dropped = await asyncio.to_thread(self._writer.duplicates_total)
        timer = asyncio.create_task(self._batches.run_timer(), name=f"flush-{self.config.name}")
        try:
            return await self._loop()
        finally:
            timer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await timer
            with contextlib.suppress(StorageError):
                await self._batches.drain()
            if not self.state.state.terminal:
                self._emit(StreamState.STOPPED, "stopped", "stopped")

    async def _loop(self) -> StateChange:
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
            self._emit(StreamState.CONNECTING, f"connecting to the hub {self.config.hub.shown}", "connecting")
            self._read = asyncio.create_task(self._read_once(), name=f"hub-read-{self.config.name}")
            try:
                outcome = await self._read
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    raise
                outcome = _Outcome(StreamState.CONNECTING, f"reconnecting ({self._interrupt})", "interrupted")
            except StorageError as exc:
                outcome = _Outcome(StreamState.PAUSED, str(exc), "storage")
            except Exception as exc:  # a bug: keep the traceback, keep following (with backoff)
                log.exception("%s: unexpected error while reading the hub", self.config.name)
                outcome = _Outcome(StreamState.RECONNECTING, f"internal error: {type(exc).__name__}: {exc}",
                                   "internal_error", -1)  # fmt: skip
            finally:
                self._read = None
            try:
                await self._batches.drain()
            except StorageError as exc:
                outcome = _Outcome(StreamState.PAUSED, str(exc), "storage")
            if outcome.reason == "storage" or self._batches.failure is not None:
                await self._wait_for_storage(outcome.message)
                continue
            if outcome.progress:
                self._backoff.reset()
            if outcome.terminal:
                return self._emit(outcome.state, outcome.message, outcome.reason)
            if outcome.reason == "interrupted":
                continue
            self.stats.reconnects += 1
            delay = self._backoff.next_delay() if outcome.delay < 0 else outcome.delay
            if delay <= 0:
                self._emit(outcome.state, outcome.message, outcome.reason)
                continue
            message = outcome.message
            if outcome.state is StreamState.RECONNECTING:
                message = f"{message}; reconnecting in {delay:.1f} s"
            self._emit(outcome.state, message, outcome.reason, time.time() + delay)
            await self._sleep(delay)

    async def _wait_for_storage(self, why: str) -> None:
        """As the engine does: pause, then resume from the STORED position (batches after a failed one were
        refused by the writer, so nothing past it is stored) and read those messages from the hub again."""
        await self._batches.discard()
        delay = self.config.storage_retry
        self._emit(StreamState.PAUSED, f"{why}; retrying in {delay:.0f} s", "storage", time.time() + delay)
        await self._sleep(delay)
        try:
            stored = await asyncio.to_thread(self._writer.resume_after_failure)
        except StorageError as exc:
            self._batches.failure = exc
            return
        self._position = parse_position(stored.offset)

    async def _sleep(self, delay: float) -> None:
        self._wake.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), timeout=delay)

    # -- one read -----------------------------------------------------------------------------------------
    async def _read_once(self) -> _Outcome:
        refusals: list[Exception] = []  # a refused request gets no answer; the server says why on the side
        try:
            nc = await connect(self.config.hub, reconnect=False,
                               on_error=lambda exc: refusals.append(exc) if is_refusal(exc) else None)  # fmt: skip
        except HubRefused as refused:
            return _Outcome(StreamState.SIGNED_OUT, refused.message, "hub_refused", terminal=True)
        except HubUnavailable as unreachable:
            return _Outcome(StreamState.RECONNECTING, f"network error: {unreachable.message}", "network", -1)
        try:
            return await self._consume(nc)
        except (nats.errors.Error, TimeoutError) as error:
            cause: Exception = refusals[-1] if refusals else error
            if is_refusal(cause):
                return _Outcome(StreamState.ERROR, f"the hub refused to let this user read the tenant "
                                f"{self.config.names.tenant} ({describe(cause)})", "hub_forbidden", terminal=True)  # fmt: skip
            return _Outcome(StreamState.RECONNECTING, f"network error: {describe(cause)}", "network", -1)
        finally:
            with contextlib.suppress(Exception):
                await nc.close()

    async def _consume(self, nc: NATS) -> _Outcome:
        names, config = self.config.names, self.config
        js = nc.jetstream(timeout=5.0)
        try:
            info = await js.stream_info(names.stream)
        except nats.js.errors.NotFoundError:
            return _Outcome(StreamState.RECONNECTING, f"the hub has no events of the tenant {names.tenant} yet "
                            "(is its relay running, with the same hub tenant name?)", "no_stream", -1)  # fmt: skip
        first = info.state.first_seq
        if self._position and first > self._position + 1 and info.state.messages:
            self._batches.add_gap(GapMarker(f"the hub no longer holds messages {self._position + 1}–{first - 1} "
                                            "(its retention)", resumed_from=None, lost_cursor=None),
                                  position_text(first - 1))  # fmt: skip
            self._position = first - 1
        consumer = await js.add_consumer(
            names.stream, consumer_config(names, config.event_types, self._position)
        )
        inbox = nc.new_inbox()
        sub = await nc.subscribe(inbox)
        try:
            self._set_live(catching_up=(consumer.num_pending or 0) > 0, force=True)
            return await self._pull(nc, sub, next_subject(names, consumer.name or ""))
        finally:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(js.delete_consumer(names.stream, consumer.name or ""), 1.0)

    async def _pull(self, nc: NATS, sub: Subscription, subject: str) -> _Outcome:
        config, batches = self.config, self._batches
        request = pull_request(config.pull_batch, config.pull_expires, config.heartbeat)
        expected, progress = 1, False
        while True:
            await nc.publish(subject, request, reply=sub.subject)
            remaining = config.pull_batch
            while remaining > 0:
                try:
                    msg = await sub.next_msg(timeout=config.stall_timeout)
                except nats.errors.TimeoutError:
                    if nc.is_closed or not nc.is_connected:
                        return _Outcome(StreamState.RECONNECTING, "network error: lost the connection to the hub",
                                        "network", -1, progress=progress)  # fmt: skip
                    return _Outcome(StreamState.RECONNECTING, f"the hub went quiet for {config.stall_timeout:g} s "
                                    "(stalled)", "stalled", 0.0, progress=progress)  # fmt: skip
                status = msg.headers.get("Status") if msg.headers else None
                if status is not None:
                    if status == Status.HEARTBEAT:
                        continue
                    if status in (Status.REQUEST_TIMEOUT, Status.NO_MESSAGES):
                        break
                    text = (msg.headers or {}).get("Description", "") or status
                    return _Outcome(StreamState.RECONNECTING, f"the hub ended the read ({status} {text})",
                                    "stream_error", 0.0 if progress else -1, progress=progress)  # fmt: skip
                where = delivery(msg.reply)
                if where is None:
                    continue
                if where.consumer_seq != expected:  # one went missing: read again from what is stored
                    return _Outcome(StreamState.CONNECTING, "a message from the hub went missing; reading again "
                                    "from the stored position", "reordered", progress=progress)  # fmt: skip
                expected, remaining, progress = expected + 1, remaining - 1, True
                await self._take(msg, where.stream_seq)
                if batches.full or where.pending == 0:
                    self._set_live(catching_up=where.pending > 0)
                    await batches.flush()

    async def _take(self, msg: Msg, sequence: int) -> None:
        """Add one hub message to the pending batch (a gap marker starts a batch of its own)."""
        kind, position, batches = (
            self.config.names.kind_of(msg.subject),
            position_text(sequence),
            self._batches,
        )
        self._position = sequence
        if kind == GAP:
            await batches.flush()
            try:
                batches.add_gap(GapPayload.model_validate_json(msg.data).marker(), position)
            except ValueError as exc:
                batches.add_rejected(_unreadable(kind, msg, f"gap marker: {exc}"), position)
        elif kind == REJECTED:
            try:
                batches.add_rejected(RejectedPayload.model_validate_json(msg.data).row(), position)
            except ValueError as exc:
                batches.add_rejected(_unreadable(kind, msg, f"rejected frame: {exc}"), position)
        else:
            raw = msg.data.decode(errors="replace")
            try:
                message, time_text = decode_frame_timed(kind, raw)
            except MessageRejected as exc:
                log.warning("%s: rejected hub message %d: %s", self.config.name, sequence, exc.reason)
                batches.add_rejected(RejectedRow(kind, exc.offset, exc.reason, raw, time.time()), position)
                return
            if isinstance(message, EventMessage):
                batches.add_event(EventRow.from_message(message, raw, time.time(), time_text), position)
            else:  # the collector publishes only events here; anything else is kept, never dropped
                batches.add_rejected(_unreadable(kind, msg, "not an event"), position)

    def _set_live(self, *, catching_up: bool, force: bool = False) -> None:
        want = StreamState.CATCHING_UP if catching_up else StreamState.LIVE
        if force or self.state.state is not want:
            message = "catching up on the hub's stored events" if catching_up else "live"
            self._emit(want, message, want.name.lower())

    def _emit(
        self, state: StreamState, message: str, reason: str, retry_at: float | None = None
    ) -> StateChange:
        change = StateChange(state, message, reason, retry_at)
        self.state = change
        log.info("%s: %s — %s", self.config.name, state.value, message)
        for callback in list(self.on_state):
            callback(change)
        return change


def _unreadable(kind: str, msg: Msg, reason: str) -> RejectedRow:
    return RejectedRow(kind, None, reason, msg.data.decode(errors="replace")[:MAX_REJECTED_RAW], time.time())
