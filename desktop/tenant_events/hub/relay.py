"""The collector: standby until it holds the lease, then the stream engine follows the tenant into the hub.

    connect to the hub ─▶ create the stream and buckets when missing ─▶ STANDBY
    STANDBY ──lease acquired──▶ LEADER: StreamEngine(tenant) → HubSink(JetStream) while Lease.hold() renews
    LEADER ──lease lost──▶ engine stopped (tenant connection closed at once) ─▶ STANDBY
    LEADER ──engine ends (stopped, signed out, refused)──▶ lease released ─▶ done
    LEADER also runs `leader_work(nc, lease.valid)` (the team's alerts, tenant/team_alerts.py), cancelled with it
                 (started again after a failure while the lease holds: the team's alerts keep flowing)

The tenant connection is opened only by the engine, and the engine exists only while the lease is held: a
standby never competes for the tenant's few stream connections.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import TypeVar

import httpx
import nats.errors
import nats.js.errors
from nats.aio.client import Client as NATS
from nats.js import JetStreamContext
from nats.js.kv import KeyValue

from tenant_events.cancelling import finish_cancelled
from tenant_events.errors import StorageError
from tenant_events.http import stream_client
from tenant_events.hub.connection import (
    HubOptions,
    HubRefused,
    HubUnavailable,
    close_connection,
    connect,
    describe,
    is_refusal,
)
from tenant_events.hub.lease import Lease, new_holder
from tenant_events.hub.messages import LeaseRecord
from tenant_events.hub.provision import Provisioned, StreamPlan, provision
from tenant_events.hub.publisher import HubSink
from tenant_events.hub.subjects import HubNames
from tenant_events.store.records import CommitResult
from tenant_events.stream.backoff import Backoff
from tenant_events.stream.engine import EngineConfig, StreamEngine
from tenant_events.stream.tokens import TokenProvider
from tenant_events.values.stream_states import StateChange, StreamState

log = logging.getLogger(__name__)
T = TypeVar("T")
LeaderWork = Callable[[NATS, Callable[[], bool]], Awaitable[None]]

# Seconds between tries while the hub does not take batches (the engine's "storage" pause).
STORAGE_RETRY = 1.0
# A live event waits at most this long in the relay's batch (the engine's default, 0.1 s, suits a local store);
# in a catch-up batches fill up to 1,000 events first anyway. Each batch costs one cursor write on the hub.
BATCH_DELAY = 0.02
# Seconds before the leader starts its alert work again after it failed: 0.5-1 s, 1-2 s … up to 15-30 s.
WORK_RETRY = 1.0
WORK_RETRY_CAP = 30.0


@dataclass(frozen=True)
class RelayConfig:
    engine: EngineConfig
    hub: HubOptions
    names: HubNames
    plan: StreamPlan = field(default_factory=StreamPlan)
    standby_poll: float = 0.5


class Relay:
    """One collector process; observe `on_role(role, message)` and the engine's `on_state`."""

    def __init__(
        self,
        config: RelayConfig,
        tokens: TokenProvider,
        *,
        client_factory: Callable[[], httpx.AsyncClient] = stream_client,
        leader_work: LeaderWork | None = None,
        leader_work_is: tuple[str, str] = ("alerts", "the team's alerts"),
    ) -> None:
        engine = replace(
            config.engine,
            storage_retry=STORAGE_RETRY,
            batch_max_delay=min(config.engine.batch_max_delay, BATCH_DELAY),
        )
        self.config = replace(config, engine=engine)
        self._tokens = tokens
        self._client_factory = client_factory
        self._leader_work = leader_work
        self._work_is = leader_work_is  # (the role its lines are said under, what it is in a sentence)
        self.on_role: list[Callable[[str, str], None]] = []
        self.on_state: list[Callable[[StateChange], None]] = []
        self.engine: StreamEngine | None = None
        self.leader_terms = 0
        self.published = 0  # events the hub stored for this process (not counting ones it held already)
        self.duplicates = 0
        self._stop = asyncio.Event()
        self._last_error = ""
        self._closing = False
        self._refusal: Exception | None = None  # the last "permissions violation" the server reported

    @property
    def stopping(self) -> bool:
        """stop() was called."""
        return self._stop.is_set()

    def stop(self) -> None:
        """Stop streaming, release the lease, return from run() (safe from a signal handler)."""
        self._stop.set()
        if self.engine is not None:
            self.engine.stop()

    async def run(self) -> StateChange:
        """Until stopped, or the engine ends by itself (signed out, refused); returns the final state."""
        nc = await self._connect()
        if nc is None:
            return StateChange(StreamState.STOPPED, "stopped", "stopped")
        try:
            return await self._serve(nc)
        finally:
            self._closing = True
            with contextlib.suppress(Exception):
                await close_connection(nc)

    async def _connect(self) -> NATS | None:
        """A connection that rejoins another server by itself; first one that does not, to learn quickly
        whether the hub is there and takes the credentials (HubRefused ends the relay: retrying cannot help)."""
        hub, backoff = self.config.hub, Backoff(base=0.5, cap=30.0)
        self._role("connecting", f"connecting to the hub {hub.shown}")
        while not self._stop.is_set():
            try:
                probe = await connect(hub, reconnect=False)
            except HubUnavailable as exc:
                delay = backoff.next_delay()
                self._role("connecting", f"{exc.message}; retrying in {delay:.1f} s")
                await self._until_stopped(asyncio.sleep(delay))
                continue
            await close_connection(probe)
            return await self._until_stopped(
                connect(
                    hub,
                    reconnect=True,
                    on_error=self._hub_error,
                    on_disconnect=self._hub_lost,
                    on_reconnect=self._hub_back,
                )
            )
        return None

    async def _serve(self, nc: NATS) -> StateChange:
        names, plan = self.config.names, self.config.plan
        js = nc.jetstream()
        made = await self._until_stopped(self._provision(js))
        if made is None:
            return StateChange(StreamState.STOPPED, "stopped", "stopped")
        self._role("ready", made.summary)
        if made.warning is not None:
            self._refusal = None  # the refused stream update's: not a reason to stop
            self._role("ready", made.warning)
        # The bucket's max age is the lease's real time to live (fixed when the first relay made the bucket):
        # a different --lease-seconds here must not make this relay think its lease outlives the key.
        ttl = (await made.lease.status()).ttl or plan.lease_ttl
        if abs(ttl - plan.lease_ttl) > 0.01:
            self._role(
                "ready",
                f"the hub's lease lasts {ttl:g} s (set when its bucket was made), not {plan.lease_ttl:g} s",
            )
        lease_kv = await nc.jetstream(timeout=max(0.5, ttl / 4)).key_value(names.lease_bucket)
        lease = Lease(lease_kv, ttl, new_holder())
        while not self._stop.is_set():
            await self._until_stopped(lease.acquire(self.config.standby_poll, self._waiting))
            if self._stop.is_set():
                break
            final = await self._lead(nc, made.cursor, lease)
            if final is not None:
                await lease.release()
                return final
        await lease.release()
        return StateChange(StreamState.STOPPED, "stopped", "stopped")

    async def _provision(self, js: JetStreamContext) -> Provisioned:
        """The stream and buckets, retried while the hub does not answer (a JetStream leader being elected)."""
        names, backoff = self.config.names, Backoff(base=0.5, cap=10.0)
        while True:
            try:
                return await provision(js, names, self.config.plan)
            except (nats.errors.Error, TimeoutError) as error:
                # A refused JetStream request never gets an answer: the server's "permissions violation"
                # arrives on the side (_hub_error) and the request times out.
                exc: Exception = self._refusal or error
                self._refusal = None
                if is_refusal(exc) or (isinstance(exc, nats.js.errors.APIError) and exc.code == 403):
                    raise HubRefused(
                        f"the hub user may not create or read the stream {names.stream} ({describe(exc)})",
                        "use a collector's credentials",
                    ) from exc
                if isinstance(exc, nats.js.errors.APIError) and exc.code == 400:
                    raise  # a bad request (e.g. more replicas than servers): its description says why
                delay = backoff.next_delay()
                self._role(
                    "connecting",
                    f"the hub did not set up the stream ({describe(exc)}); retrying in {delay:.1f} s",
                )
                await asyncio.sleep(delay)

    async def _lead(self, nc: NATS, cursor: KeyValue, lease: Lease) -> StateChange | None:
        """Stream while the lease holds; None when it was lost (back to standby), else the engine's end."""
        try:
            sink = await HubSink.open(nc, self.config.names, cursor, fence=lease.valid)
        except StorageError as exc:  # the cursor cannot be read now: give the lease up, try again
            self._role("standby", f"{exc.message}; trying again")
            await lease.release()
            await asyncio.sleep(self.config.standby_poll)
            return None
        engine = StreamEngine(self.config.engine, self._tokens, sink, client_factory=self._client_factory)
        engine.on_state.extend(self.on_state)
        engine.on_commit.append(self._count)
        self.engine = engine
        self.leader_terms += 1
        self._role("leader", f"holds the lease ({lease.holder.holder}); following the tenant")
        running = asyncio.create_task(engine.run(), name=f"relay-{self.config.names.tenant}")
        holding = asyncio.create_task(lease.hold(), name="relay-lease")
        stopping = asyncio.create_task(self._stop.wait())
        working = asyncio.create_task(self._work(nc, lease), name="relay-leader-work")
        try:
            await asyncio.wait({running, holding, stopping}, return_when=asyncio.FIRST_COMPLETED)
            if holding.done() and not running.done():
                self._role("standby", f"lost the lease ({holding.result()}); closing the tenant connection")
                engine.stop()
                await running
                return None
            engine.stop()
            return await running
        finally:
            for task in (holding, stopping):  # (hub requests and waits: nothing of their own to clean up)
                task.cancel()
                await finish_cancelled(task, again=True)
            working.cancel()  # (the team's alerts close their tenant database: one cancellation, then wait)
            await finish_cancelled(working)
            self.engine = None
            await sink.close()

    async def _work(self, nc: NATS, lease: Lease) -> None:
        """The leader's other work (the team's alerts), for as long as it leads: started again after a failure
        (a hub that answered late, or was away a moment) with a growing pause, so the team's alerts keep
        flowing for the rest of the term; said once per reason, and the work says when it runs again. The lease
        is kept: a standby would meet the same hub, and handing over would interrupt the tenant's stream."""
        if self._leader_work is None:
            return
        backoff, said = Backoff(base=WORK_RETRY, cap=WORK_RETRY_CAP, least=0.5), ""
        while lease.valid():
            began = time.monotonic()
            try:
                await self._leader_work(nc, lease.valid)
                return
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                reason, error = _failure(exc), exc
            if time.monotonic() - began > WORK_RETRY_CAP:
                backoff.reset()  # it ran a while: a new failure, not the same one again
                said = ""
            delay = backoff.next_delay()
            tenant = self.config.names.tenant
            if reason == said:
                log.info("relay %s: the leader's work failed again: %s", tenant, reason)
            else:
                said = reason
                log.warning("relay %s: the leader's work failed: %s", tenant, reason, exc_info=error)
                role, what = self._work_is
                self._role(
                    role, f"{what} stopped ({reason}); trying again every {WORK_RETRY_CAP:g} s at most"
                )
            await asyncio.sleep(delay)

    async def _until_stopped(self, work: Awaitable[T]) -> T | None:
        """`work`'s result, or None when stop() came first (the work is then cancelled)."""
        task = asyncio.ensure_future(work)
        stopping = asyncio.ensure_future(self._stop.wait())
        try:
            await asyncio.wait({task, stopping}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopping.cancel()
        if task.done():
            return task.result()
        task.cancel()
        await finish_cancelled(task, again=True)
        return None

    def _count(self, result: CommitResult) -> None:
        self.published += result.inserted
        self.duplicates += result.duplicates

    def _waiting(self, holder: LeaseRecord | None) -> None:
        who = f"{holder.holder}" if holder else "nobody (it is being released)"
        self._role("standby", f"the lease is held by {who}; waiting to take over")

    def _hub_error(self, exc: Exception) -> None:
        if is_refusal(exc):
            self._refusal = exc
        text = describe(exc)
        if text != self._last_error:
            self._last_error = text
            self._role("hub", f"the hub {self.config.hub.shown}: {text}")

    def _hub_lost(self) -> None:
        if self._closing:
            return
        self._role("hub", "lost the connection to the hub; reconnecting")

    def _hub_back(self) -> None:
        self._last_error = ""
        self._role("hub", "connected to the hub again")

    def _role(self, role: str, message: str) -> None:
        log.info("relay %s: %s: %s", self.config.names.tenant, role, message)
        for callback in list(self.on_role):
            callback(role, message)


def _failure(exc: BaseException) -> str:
    """Why the leader's work failed, in a few words (the first failure of work run side by side)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, TimeoutError):
        return "the hub did not answer in time"
    return describe(exc)
