"""The collector's sink: each batch the engine hands over is published to JetStream, then the cursor moves.

Per batch, in the order submitted:
  1. publish every event on `tenant-events.<tenant>.<type>` (payload: its `data:` JSON as received), then the
     rejected frames and the gap marker on their own subjects; each with `Nats-Msg-Id` (the event id), so a
     replay after a crash is stored once (the stream's duplicate window);
  2. wait for the acknowledgement of the batch's last message;
  3. only then write the cursor after them to the key-value bucket, revision-checked and only while the lease
     is valid — so a stored cursor never points past an event the hub does not hold.

Order. Each message names the stream sequence it must follow (`Nats-Expected-Last-Sequence`) and JetStream
stores it only if the stream ends there. So when the batch's last message is acknowledged at the sequence
predicted for it, every message before it is stored, in order; one lost in flight (a stream leader changing, a
reconnect) makes every later one refused instead of stored out of order, the batch fails and the engine resumes
from the stored cursor. The same check refuses a deposed leader's late publishes. Acknowledging only the last
message is what makes the relay fast: an acknowledgement each cost more than the rest of the relay together.
The sequence is every replica's own state, so the check is safe on a replicated stream (an expected message id
is not: replicas keep the last id in memory, and one that disagrees stops applying — nats-server 2.15 does).

Predicting sequences needs every message to be new. After (re)starting, the engine replays from the stored
cursor what the last run may have published already: until the first message the hub stores as new, messages go
one at a time and duplicates are recognised by their acknowledgement; from then on they are pipelined. An event
the tenant sends twice within one run (at-least-once delivery) is published once. Batch k+1 goes out while batch
k's acknowledgement is on its way; cursors still move in order.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Final

import nats.errors
import nats.js.errors
from nats.aio.client import Client as NATS
from nats.js.api import PubAck
from nats.js.kv import KeyValue
from pydantic import ValidationError

from tenant_events.errors import StorageError
from tenant_events.hub.connection import describe
from tenant_events.hub.messages import CursorRecord, GapPayload, RejectedPayload
from tenant_events.hub.subjects import CURSOR_KEY, HubNames
from tenant_events.store.records import Batch, CommitResult, CursorState

log = logging.getLogger(__name__)

MSG_ID: Final = "Nats-Msg-Id"
EXPECTED_LAST_SEQUENCE: Final = "Nats-Expected-Last-Sequence"
_HINT: Final = "the relay retries by itself; check the hub if this goes on"
SEEN_WINDOW: Final = 50_000  # ids remembered per run of publishes to skip an event the tenant sends twice


class HubWriteError(StorageError):
    """The hub did not take a batch (unreachable, no JetStream leader, a refused publish)."""


class LeaseLost(StorageError):
    """This collector no longer holds the lease, so it must not move the cursor: a relay's lease lapses whenever
    the hub is out of reach for a while, and another relay (or this one, later) carries on."""

    expected = True


class _Sent:
    """One published batch waiting for its acknowledgement: `ack` must come back at sequence `last`."""

    __slots__ = ("ack", "events", "last")

    def __init__(self, ack: asyncio.Future[PubAck] | None, events: int, last: int) -> None:
        self.ack, self.events, self.last = ack, events, last


class HubSink:
    """`stream.sink.BatchSink` on JetStream. Make it on the loop it serves with `await HubSink.open(...)`."""

    def __init__(
        self,
        nc: NATS,
        names: HubNames,
        cursor: KeyValue,
        *,
        fence: Callable[[], bool],
        ack_timeout: float = 10.0,
    ) -> None:
        self._nc, self._js, self._names, self._kv, self._fence = nc, nc.jetstream(), names, cursor, fence
        self._ack_timeout = ack_timeout
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[tuple[Batch, concurrent.futures.Future[CommitResult]]] = asyncio.Queue()
        self._worker: asyncio.Task[None] | None = None
        self._confirming: asyncio.Task[None] | None = None  # the last batch's acknowledgement and cursor
        self._state = CursorState(None, None, None)
        self._revision: int | None = None
        self._failed: StorageError | None = None
        self._last_seq: int | None = None  # where the stream ends after what was sent; None: not known yet
        self._seen: dict[str, None] = {}  # ids published in this run, oldest first (SEEN_WINDOW of them)
        self._duplicates = 0
        self.published = 0

    @classmethod
    async def open(
        cls,
        nc: NATS,
        names: HubNames,
        cursor: KeyValue,
        *,
        fence: Callable[[], bool],
        ack_timeout: float = 10.0,
    ) -> HubSink:
        sink = cls(nc, names, cursor, fence=fence, ack_timeout=ack_timeout)
        await sink._reload()
        return sink

    # -- BatchSink ---------------------------------------------------------------------------------------
    def submit(self, batch: Batch) -> concurrent.futures.Future[CommitResult]:
        future: concurrent.futures.Future[CommitResult] = concurrent.futures.Future()
        self._queue.put_nowait((batch, future))
        if self._worker is None or self._worker.done():
            self._worker = self._loop.create_task(self._work(), name=f"hub-publish-{self._names.tenant}")
        return future

    def cursor_state(self) -> CursorState:
        return self._state

    def duplicates_total(self) -> int:
        return self._duplicates

    def resume_after_failure(self) -> CursorState:
        """Called in a worker thread by the engine: reads the cursor again on the sink's loop."""
        try:
            asyncio.run_coroutine_threadsafe(self._restart(), self._loop).result(timeout=30)
        except TimeoutError as exc:  # the engine pauses on a StorageError and asks again
            raise HubWriteError("the hub did not answer within 30 s", _HINT) from exc
        return self._state

    async def close(self) -> None:
        """Stop the worker once it has handled what was submitted."""
        if self._worker is not None:
            await self._queue.join()
            if self._confirming is not None:
                await self._confirming
            self._worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker

    # -- state -------------------------------------------------------------------------------------------
    async def _restart(self) -> None:
        await self._reload()
        self._failed, self._last_seq = None, None  # a new run: it starts by finding where the stream ends
        self._seen.clear()

    async def _reload(self) -> None:
        try:
            entry = await self._kv.get(CURSOR_KEY)
        except nats.js.errors.KeyNotFoundError:
            self._state, self._revision = CursorState(None, None, None), None
            return
        except (TimeoutError, nats.errors.Error) as exc:
            raise HubWriteError(f"cannot read the cursor from the hub ({describe(exc)})", _HINT) from exc
        try:
            record = CursorRecord.model_validate_json(entry.value or b"{}")
        except ValidationError:
            log.warning("the hub's cursor for %s is unreadable; following from the start", self._names.tenant)
            record = CursorRecord()
        self._state = CursorState(record.offset, record.last_event_time, record.updated_at)
        self._revision = entry.revision

    def _fail(self, exc: BaseException) -> StorageError:
        failed = (
            exc
            if isinstance(exc, StorageError)
            else HubWriteError(f"the hub did not take a batch ({describe(exc)})", _HINT)
        )
        if self._failed is None:
            self._failed = failed
        self._last_seq = None
        self._seen.clear()
        return self._failed

    # -- worker ------------------------------------------------------------------------------------------
    async def _work(self) -> None:
        while True:
            batch, future = await self._queue.get()
            try:
                if not future.set_running_or_notify_cancel():
                    continue
                if self._failed is not None:  # never publish past a batch that failed (resume first)
                    future.set_exception(self._failed)
                    continue
                try:
                    sent = await self._publish(batch)
                except Exception as exc:
                    future.set_exception(self._fail(exc))
                    continue
                self._confirming = asyncio.create_task(self._confirm(batch, sent, self._confirming, future))
            finally:
                self._queue.task_done()

    async def _publish(self, batch: Batch) -> _Sent:
        """Send the batch's messages, the last one asking for an acknowledgement."""
        names, seen = self._names, self._seen
        messages: list[tuple[str, bytes, str]] = [
            (names.event_subject(row.type), row.raw.encode(), row.event_id) for row in batch.events
        ]
        for rejected in batch.rejected:
            record = RejectedPayload.of(rejected)
            messages.append((names.rejected_subject, record.to_bytes(), record.message_id()))
        if batch.gap is not None:
            gap = GapPayload.of(batch.gap)
            messages.append((names.gap_subject, gap.to_bytes(), gap.message_id()))
        fresh = []
        for index, message in enumerate(messages):
            if message[2] in seen:  # re-sent by the tenant within this run: published already
                continue
            seen[message[2]] = None
            if len(seen) > SEEN_WINDOW:
                del seen[next(iter(seen))]
            fresh.append((index < len(batch.events), message))
        stored, index = 0, 0
        while self._last_seq is None and index < len(fresh):  # after a (re)start: one at a time until new
            is_event, (subject, data, msg_id) = fresh[index]
            index += 1
            reply = await self._js.publish(subject, data, timeout=self._ack_timeout, headers={MSG_ID: msg_id})
            if not reply.duplicate:
                self._last_seq, stored = reply.seq, stored + is_event
        rest, last, ack = fresh[index:], self._last_seq or 0, None
        for i, (_, (subject, data, msg_id)) in enumerate(rest):
            headers = {MSG_ID: msg_id, EXPECTED_LAST_SEQUENCE: str(last)}
            if i == len(rest) - 1:
                ack = await self._js.publish_async(subject, data, headers=headers)
            else:
                await self._nc.publish(subject, data, headers=headers)  # no reply: the sequence check vouches
            last += 1
        if rest and self._failed is None:
            self._last_seq = last
        return _Sent(ack, stored + sum(is_event for is_event, _ in rest), last)

    async def _confirm(
        self,
        batch: Batch,
        sent: _Sent,
        previous: asyncio.Task[None] | None,
        future: concurrent.futures.Future[CommitResult],
    ) -> None:
        try:
            if previous is not None:
                await previous  # cursors move in order; never raises (failures go to the futures)
            if self._failed is not None:
                raise self._failed
            future.set_result(await self._commit(batch, sent))
        except Exception as exc:
            future.set_exception(self._fail(exc))
        finally:
            if sent.ack is not None:  # a lost acknowledgement must not hold its slot in nats-py forever
                sent.ack.cancel()

    async def _commit(self, batch: Batch, sent: _Sent) -> CommitResult:
        if sent.ack is not None:
            ack = await asyncio.wait_for(sent.ack, self._ack_timeout)
            if ack.duplicate or ack.seq != sent.last:  # something before it went missing (or was there)
                raise HubWriteError(
                    f"the hub stored the batch's last message at {ack.seq}, not {sent.last}", _HINT
                )
        self.published += sent.events
        self._duplicates += len(batch.events) - sent.events
        if batch.cursor is not None:
            await self._move_cursor(batch)
        return CommitResult(
            inserted=sent.events,
            duplicates=len(batch.events) - sent.events,
            rejected=len(batch.rejected),
            cursor=batch.cursor,
            last_event_time=batch.last_event_time,
        )

    async def _move_cursor(self, batch: Batch) -> None:
        if not self._fence():
            raise LeaseLost(
                "this collector's lease lapsed; the cursor stays where it was",
                "another collector takes over, or this one once it holds the lease again",
            )
        newest = batch.last_event_time
        if self._state.last_event_time and (newest is None or self._state.last_event_time > newest):
            newest = self._state.last_event_time
        record = CursorRecord(offset=batch.cursor, last_event_time=newest, updated_at=time.time())
        try:
            if self._revision is None:
                revision = await self._kv.create(CURSOR_KEY, record.to_bytes())
            else:
                revision = await self._kv.update(CURSOR_KEY, record.to_bytes(), last=self._revision)
        except nats.js.errors.KeyWrongLastSequenceError as exc:
            raise LeaseLost("another collector moved the hub's cursor", "this one stops streaming") from exc
        self._revision = revision
        self._state = CursorState(record.offset, record.last_event_time, record.updated_at)
