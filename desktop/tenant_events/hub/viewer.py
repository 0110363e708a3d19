"""A viewer: follows one tenant through the hub into the local store, with the engine's states and backoff.

    CONNECTING ──consumer made──▶ CATCHING_UP ⇄ LIVE ──hub lost, stalled, 409──▶ RECONNECTING (backoff)
        ├─ hub unreachable / no stream yet ─▶ RECONNECTING (jittered backoff, as for the tenant)
        └─ credentials refused ─▶ SIGNED_OUT (terminal);  no read permission ─▶ ERROR (terminal)

Messages become the same `Batch`es the engine makes (events decoded by the same wire models, rejected frames,
gap markers) and go to the same `StoreWriter`, whose cursor here is the hub position (`hub:<stream sequence>`).
Everything downstream — tables, search, alerts, notifications, export — cannot tell a viewer from a tenant.
A batch is committed when it holds `batch_max_events`, when `batch_max_delay` passed, or at once when the hub
has nothing more waiting (so a live event reaches the table without the batching delay). The loop, the backoff
and the batches are the engine's own (stream/follow_loop.py, outcomes.py, batching.py); this file is the hub read.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from dataclasses import dataclass, replace
from enum import StrEnum

import nats.errors
import nats.js.errors
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription

from tenant_events.errors import ConfigError
from tenant_events.hub.admission import Origin, ReadCheck, Verdict
from tenant_events.hub.connection import (
    HubInsecure,
    HubOptions,
    HubRefused,
    HubUnavailable,
    close_connection,
    connect,
    describe,
    is_refusal,
)
from tenant_events.hub.consumer import Status, consumer_config, next_subject, pull_request
from tenant_events.hub.messages import GapPayload, RejectedPayload
from tenant_events.hub.subjects import GAP, REJECTED, HubNames, parse_position, position_text
from tenant_events.server_text import shown
from tenant_events.store.records import CursorState, EventRow, GapMarker, RejectedRow
from tenant_events.stream.backoff import Backoff
from tenant_events.stream.batching import MAX_REJECTED_RAW
from tenant_events.stream.follow_loop import FollowLoop
from tenant_events.stream.outcomes import USE_BACKOFF, Outcome, Reason, Reconnects
from tenant_events.stream.sink import BatchSink
from tenant_events.values.stream_states import StateChange, StreamState
from tenant_events.wire import EventMessage, MessageRejected, decode_frame_timed

log = logging.getLogger(__name__)
MAX_REASON = 1000  # characters of a rejected row's reason (the collector's text, or the checks' own)


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
    max_data_bytes: int = 1024 * 1024  # as the direct stream's (EngineConfig.max_data_bytes)
    # Each event's received_at is when the hub stored it, not when this process did: the same for every reader,
    # so rules judging an event's age by it (a team relay's) decide alike whenever they read it.
    hub_time: bool = False


class HubReason(StrEnum):
    """The reasons only a hub read ends with (the rest are the engine's `Reason`s)."""

    NOT_A_HUB_DATABASE = "not_a_hub_database"
    HUB_REFUSED = "hub_refused"
    HUB_FORBIDDEN = "hub_forbidden"
    NO_STREAM = "no_stream"
    REORDERED = "reordered"
    UNTRUSTED = "untrusted_certificate"  # the hub offered no TLS: a network error the user must look at
    HUB_CONFIG = "config"


class HubViewer(FollowLoop):
    """`monitor.EventSource` reading from the hub; the monitor passes the tenant database's writer."""

    def __init__(self, config: ViewerConfig, writer: BatchSink) -> None:
        reconnects = Reconnects(Backoff(base=config.backoff_base, cap=config.backoff_cap))
        super().__init__(
            config.name,
            writer,
            reconnects,
            max_events=config.batch_max_events,
            max_delay=config.batch_max_delay,
            storage_retry=config.storage_retry,
        )
        self.config = config
        self._position = 0  # stream sequence of the last message taken into a batch
        self._origin: Origin | None = (
            None  # the tenant the database holds (read from it before the first read)
        )
        self.dropped = 0  # messages on the inbox that were not this viewer's delivery
        self._removed_marked = (
            0  # the last removed stream sequence a gap marker was kept for (filtered reads)
        )

    # -- the follower's part -------------------------------------------------------------------------------
    def _start_from(self, stored: CursorState) -> StateChange | None:
        try:
            self._resume_from(stored)
        except ValueError as exc:
            return self._emit(
                StreamState.ERROR,
                f"{exc}: this database was filled from the tenant itself; give the hub profile another name",
                HubReason.NOT_A_HUB_DATABASE,
            )
        return None

    def _resume_from(self, stored: CursorState) -> None:
        self._position = parse_position(stored.offset)

    def _connecting_text(self) -> str:
        return f"connecting to the hub {self.config.hub.shown}"

    # -- one read -----------------------------------------------------------------------------------------
    async def _attempt(self) -> Outcome:
        refusals: list[Exception] = []  # a refused request gets no answer; the server says why on the side
        try:
            nc = await connect(
                self.config.hub,
                reconnect=False,
                on_error=lambda exc: refusals.append(exc) if is_refusal(exc) else None,
            )
        except HubRefused as refused:
            return Outcome(StreamState.SIGNED_OUT, refused.message, HubReason.HUB_REFUSED, terminal=True)
        except HubInsecure as insecure:  # the server cannot prove who it is: retrying would not change that
            return Outcome(StreamState.ERROR, str(insecure), HubReason.UNTRUSTED, terminal=True)
        except ConfigError as bad:  # a CA file or key that cannot be used: one line, never a retry loop
            return Outcome(StreamState.ERROR, str(bad), HubReason.HUB_CONFIG, terminal=True)
        except HubUnavailable as unreachable:
            return Outcome(
                StreamState.RECONNECTING, f"network error: {unreachable.message}", Reason.NETWORK, USE_BACKOFF
            )
        try:
            return await self._consume(nc)
        except (nats.errors.Error, TimeoutError) as error:
            cause: Exception = refusals[-1] if refusals else error
            if is_refusal(cause):
                return Outcome(
                    StreamState.ERROR,
                    f"the hub refused to let this user read the tenant "
                    f"{self.config.names.tenant} ({describe(cause)})",
                    HubReason.HUB_FORBIDDEN,
                    terminal=True,
                )
            return Outcome(
                StreamState.RECONNECTING, f"network error: {describe(cause)}", Reason.NETWORK, USE_BACKOFF
            )
        finally:
            with contextlib.suppress(Exception):
                await close_connection(nc)

    async def _consume(self, nc: NATS) -> Outcome:
        names, config = self.config.names, self.config
        if self._origin is None:
            newest = getattr(self._writer, "newest_origin", None)  # StoreWriter; other sinks hold no events
            stored = await asyncio.to_thread(newest) if newest is not None else None
            self._origin = Origin(*stored) if stored else Origin()
        js = nc.jetstream(timeout=5.0)
        try:
            info = await js.stream_info(names.stream)
        except nats.js.errors.NotFoundError:
            return Outcome(
                StreamState.RECONNECTING,
                f"the hub has no events of the tenant {names.tenant} yet "
                "(is its relay running, with the same hub tenant name?)",
                HubReason.NO_STREAM,
                USE_BACKOFF,
            )
        first = info.state.first_seq
        if self._position and first > self._position + 1 and info.state.messages:
            self._batches.add_gap(
                GapMarker(
                    f"the hub no longer holds messages {self._position + 1}–{first - 1} (its retention)",
                    resumed_from=None,
                    lost_cursor=None,
                ),
                position_text(first - 1),
            )
            self._position = first - 1
        if config.event_types and info.state.num_deleted:
            await self._mark_removed(nc)
        consumer = await js.add_consumer(
            names.stream, consumer_config(names, config.event_types, self._position)
        )
        inbox = nc.new_inbox()
        sub = await nc.subscribe(inbox)
        try:
            self._set_live(catching_up=(consumer.num_pending or 0) > 0, force=True)
            check = ReadCheck(names, config.event_types, consumer.name or "", self._position)
            return await self._pull(nc, sub, next_subject(names, consumer.name or ""), check)
        finally:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(js.delete_consumer(names.stream, consumer.name or ""), 1.0)

    async def _mark_removed(self, nc: NATS) -> None:
        """A viewer of some event types cannot tell a message removed on the hub from one of another type (both
        are a jump in stream sequence), so before reading it asks the hub which messages after its position were
        removed and keeps a gap marker for them. Best effort: without an answer, it reads on."""
        subject = f"$JS.API.STREAM.INFO.{self.config.names.stream}"
        try:
            reply = await nc.request(subject, json.dumps({"deleted_details": True}).encode(), timeout=5.0)
            deleted = json.loads(reply.data).get("state", {}).get("deleted") or []
            after = max(self._position, self._removed_marked)
            removed = sorted(int(seq) for seq in deleted if int(seq) > after)
        except (nats.errors.Error, TimeoutError, ValueError, TypeError, AttributeError) as exc:
            log.debug(
                "%s: could not list the messages removed on the hub: %s", self.config.name, describe(exc)
            )
            return
        if removed:
            self._removed_marked = removed[-1]
            gap = GapMarker(
                f"the hub removed {len(removed)} message(s) between {removed[0]} and {removed[-1]}: "
                "events of the chosen types may be missing here",
                resumed_from=None,
                lost_cursor=None,
            )
            self._batches.add_gap(gap, position_text(self._position))

    async def _pull(self, nc: NATS, sub: Subscription, subject: str, check: ReadCheck) -> Outcome:
        config, batches = self.config, self._batches
        request = pull_request(config.pull_batch, config.pull_expires, config.heartbeat)
        progress = False
        while True:
            await nc.publish(subject, request, reply=sub.subject)
            remaining = config.pull_batch
            while remaining > 0:
                try:
                    msg = await sub.next_msg(timeout=config.stall_timeout)
                except nats.errors.TimeoutError:
                    if nc.is_closed or not nc.is_connected:
                        return Outcome(
                            StreamState.RECONNECTING,
                            "network error: lost the connection to the hub",
                            Reason.NETWORK,
                            USE_BACKOFF,
                            progress=progress,
                        )
                    return Outcome(
                        StreamState.RECONNECTING,
                        f"the hub went quiet for {config.stall_timeout:g} s (stalled)",
                        Reason.STALLED,
                        0.0,
                        progress=progress,
                    )
                status = msg.headers.get("Status") if msg.headers else None
                if status is not None:
                    if status == Status.HEARTBEAT:
                        continue
                    if status in (Status.REQUEST_TIMEOUT, Status.NO_MESSAGES):
                        break
                    text = shown((msg.headers or {}).get("Description", "") or status)  # the hub's words
                    return Outcome(
                        StreamState.RECONNECTING,
                        f"the hub ended the read ({status} {text})",
                        Reason.STREAM_ERROR,
                        0.0 if progress else USE_BACKOFF,
                        progress=progress,
                    )
                decision = check.judge(msg.subject, msg.reply)
                if decision.verdict is Verdict.DROP:
                    self._drop(decision.why)
                    continue
                if decision.verdict is Verdict.MISSING:  # one went missing: read again from what is stored
                    return Outcome(
                        StreamState.CONNECTING,
                        "a message from the hub went missing; reading again from the stored position",
                        HubReason.REORDERED,
                        progress=progress,
                    )
                where = decision.where
                assert where is not None
                remaining, progress = remaining - 1, True
                if decision.skipped is not None:
                    first, last = decision.skipped
                    await batches.flush()
                    batches.add_gap(
                        GapMarker(
                            f"the hub skipped messages {first}–{last}: events may be missing here",
                            resumed_from=None,
                            lost_cursor=None,
                        ),
                        position_text(last),
                    )
                await self._take(msg, where.stream_seq, where.stored_ns)
                if batches.full or where.pending == 0:
                    self._set_live(catching_up=where.pending > 0)
                    await batches.flush()

    def _drop(self, why: str) -> None:
        self.dropped += 1
        if self.dropped <= 20 or self.dropped % 1000 == 0:  # whoever sends them must not flood the log
            log.warning(
                "%s: ignored a message on the hub inbox (%d so far): %s", self.config.name, self.dropped, why
            )

    async def _take(self, msg: Msg, sequence: int, stored_ns: int = 0) -> None:
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
                row = RejectedPayload.model_validate_json(msg.data).row()
                cut = replace(row, reason=row.reason[:MAX_REASON], raw=row.raw[:MAX_REJECTED_RAW])
                batches.add_rejected(cut, position)
            except ValueError as exc:
                batches.add_rejected(_unreadable(kind, msg, f"rejected frame: {exc}"), position)
        elif len(msg.data) > self.config.max_data_bytes:  # kept as the direct stream keeps an oversized frame
            limit = self.config.max_data_bytes
            batches.add_rejected(
                _unreadable(kind, msg, f"data: {len(msg.data)} bytes exceeds the {limit} byte limit"),
                position,
            )
        else:
            raw = msg.data.decode(errors="replace")
            try:
                message, time_text = decode_frame_timed(kind, raw)
            except MessageRejected as exc:
                log.warning("%s: rejected hub message %d: %s", self.config.name, sequence, exc.reason[:200])
                batches.add_rejected(_unreadable(kind, msg, exc.reason, exc.offset), position)
                return
            if not isinstance(
                message, EventMessage
            ):  # the collector publishes only events here; kept, not dropped
                batches.add_rejected(_unreadable(kind, msg, "not an event"), position)
                return
            foreign = self._origin.foreign(message.event) if self._origin is not None else None
            if foreign is not None:
                log.warning("%s: rejected hub message %d: %s", self.config.name, sequence, foreign)
                batches.add_rejected(_unreadable(kind, msg, foreign, message.offset), position)
                return
            received = stored_ns / 1e9 if self.config.hub_time and stored_ns else time.time()
            batches.add_event(EventRow.from_message(message, raw, received, time_text), position)

    def _set_live(self, *, catching_up: bool, force: bool = False) -> None:
        want = StreamState.CATCHING_UP if catching_up else StreamState.LIVE
        if force or self.state.state is not want:
            message = "catching up on the hub's stored events" if catching_up else "live"
            self._emit(want, message, Reason.CATCHING_UP if catching_up else Reason.LIVE)


def _unreadable(kind: str, msg: Msg, reason: str, offset: str | None = None) -> RejectedRow:
    """A rejected row with the message's start (64 KiB, as the direct stream keeps one)."""
    raw = msg.data[: MAX_REJECTED_RAW * 4].decode(errors="replace")[:MAX_REJECTED_RAW]
    return RejectedRow(kind, offset, reason[:MAX_REASON], raw, time.time())
