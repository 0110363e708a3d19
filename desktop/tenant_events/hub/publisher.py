"""The collector's sink: each batch the engine hands over is published to JetStream, then the cursor moves.

Per batch, in the order submitted (one worker task):
  1. publish every event on `tenant-events.<tenant>.<type>` (payload: its `data:` JSON as received), then the
     rejected frames and the gap marker on their own subjects; each with `Nats-Msg-Id` (the event id), so a
     replay after a crash is stored once (the stream's duplicate window);
  2. wait for every acknowledgement;
  3. only then write the cursor after them to the key-value bucket, revision-checked and only while the lease
     is valid — so a stored cursor never points past an event the hub does not hold.
Publishes are pipelined, and each names the id of the message before it (`Nats-Expected-Last-Msg-Id`): if one
is lost in flight (a stream leader changing), the ones after it are refused instead of stored out of order, the
batch fails, and the engine resumes from the stored cursor (a replay the duplicate window absorbs). An event
the tenant sends twice within one run (at-least-once delivery) is published once: the chain names messages
actually sent.
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
from nats.js import JetStreamContext
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
EXPECTED_LAST_MSG_ID: Final = "Nats-Expected-Last-Msg-Id"
_HINT: Final = "the relay retries by itself; check the hub if this goes on"
SEEN_WINDOW: Final = 50_000  # ids remembered per run of publishes to skip an event the tenant sends twice


class HubWriteError(StorageError):
    """The hub did not take a batch (unreachable, no JetStream leader, a refused publish)."""


class LeaseLost(StorageError):
    """This collector no longer holds the lease, so it must not move the cursor."""


class HubSink:
    """`stream.sink.BatchSink` on JetStream. Make it on the loop it serves with `await HubSink.open(...)`."""

    def __init__(
        self,
        js: JetStreamContext,
        names: HubNames,
        cursor: KeyValue,
        *,
        fence: Callable[[], bool],
        ack_timeout: float = 10.0,
    ) -> None:
        self._js, self._names, self._kv, self._fence = js, names, cursor, fence
        self._ack_timeout = ack_timeout
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[tuple[Batch, concurrent.futures.Future[CommitResult]]] = asyncio.Queue()
        self._worker: asyncio.Task[None] | None = None
        self._state = CursorState(None, None, None)
        self._revision: int | None = None
        self._failed: StorageError | None = None
        self._last_id: str | None = None  # the previous message's id in this unbroken run of publishes
        self._seen: dict[str, None] = {}  # ids published in this run, oldest first (SEEN_WINDOW of them)
        self._duplicates = 0
        self.published = 0

    @classmethod
    async def open(
        cls, js: JetStreamContext, names: HubNames, cursor: KeyValue, *, fence: Callable[[], bool],
        ack_timeout: float = 10.0,
    ) -> HubSink:  # fmt: skip
        sink = cls(js, names, cursor, fence=fence, ack_timeout=ack_timeout)
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
        asyncio.run_coroutine_threadsafe(self._restart(), self._loop).result(timeout=30)
        return self._state

    async def close(self) -> None:
        """Stop the worker once it has handled what was submitted."""
        if self._worker is not None:
            await self._queue.join()
            self._worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker

    # -- worker ------------------------------------------------------------------------------------------
    async def _restart(self) -> None:
        await self._reload()
        self._failed, self._last_id = None, None  # a new run of publishes: its first names no previous id
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
                    future.set_result(await self._commit(batch))
                except Exception as exc:
                    failed = exc if isinstance(exc, StorageError) else HubWriteError(
                        f"the hub did not take a batch ({describe(exc)})", _HINT)  # fmt: skip
                    self._failed, self._last_id = failed, None
                    self._seen.clear()
                    future.set_exception(failed)
            finally:
                self._queue.task_done()

    async def _commit(self, batch: Batch) -> CommitResult:
        acks, resent = await self._publish(batch)
        try:
            done = await asyncio.wait_for(asyncio.gather(*(ack for _, ack in acks)), self._ack_timeout)
        finally:
            for _, ack in acks:  # a lost acknowledgement must not hold its slot in nats-py forever
                ack.cancel()
        inserted = [a for (is_event, _), a in zip(acks, done, strict=True) if is_event and not a.duplicate]
        duplicates = len(batch.events) - len(inserted)
        self._duplicates += duplicates
        self.published += len(inserted)
        if batch.cursor is not None:
            await self._move_cursor(batch)
        log.debug("%s: %d published, %d already on the hub, %d re-sent by the tenant", self._names.tenant,
                  len(inserted), duplicates - resent, resent)  # fmt: skip
        return CommitResult(
            inserted=len(inserted),
            duplicates=duplicates,
            rejected=len(batch.rejected),
            cursor=batch.cursor,
            first_seq=inserted[0].seq if inserted else None,
            last_seq=inserted[-1].seq if inserted else None,
            last_event_time=batch.last_event_time,
        )

    async def _publish(self, batch: Batch) -> tuple[list[tuple[bool, asyncio.Future[PubAck]]], int]:
        """Publish the batch's messages; returns (is an event, its ack) each, and how many events were skipped
        as re-sent within this run of publishes (at-least-once delivery: the tenant may send one twice).

        Skipping them is what keeps the chain of expected ids true: a re-sent event would be acknowledged as a
        duplicate, the stream's last id would stay the one before it, and the next publish would be refused."""
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
        acks: list[tuple[bool, asyncio.Future[PubAck]]] = []
        resent = 0
        try:
            for index, (subject, data, msg_id) in enumerate(messages):
                if msg_id in seen:
                    resent += index < len(batch.events)
                    continue
                seen[msg_id] = None
                if len(seen) > SEEN_WINDOW:
                    del seen[next(iter(seen))]
                headers = {MSG_ID: msg_id}
                if self._last_id is not None:
                    headers[EXPECTED_LAST_MSG_ID] = self._last_id
                acks.append(
                    (index < len(batch.events), await self._js.publish_async(subject, data, headers=headers))
                )
                self._last_id = msg_id
        except BaseException:
            for _, ack in acks:
                ack.cancel()
            raise
        return acks, resent

    async def _move_cursor(self, batch: Batch) -> None:
        if not self._fence():
            raise LeaseLost("this collector's lease lapsed; the cursor stays where it was",
                            "another collector takes over, or this one once it holds the lease again")  # fmt: skip
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
