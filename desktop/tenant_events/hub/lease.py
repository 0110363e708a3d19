"""The collector's leader lease: one key in a key-value bucket whose max age is the lease's time to live.

    standby ──create(key) succeeds──▶ leader ──update(key, last=revision) every ttl/4──▶ leader
       ▲                                 │ update refused (someone else holds it, or it expired)
       └──────── stop streaming ◀────────┤ or no successful update for ttl/2 (network loss)

The server deletes the key `ttl` after its last update (the bucket's max age), so a killed leader's lease
lapses by itself and a standby's `create` then succeeds. A leader counts its lease valid only until half the TTL
after it SENT its last successful update: the server stored that update later still, so the key outlives the
leader's own deadline by at least ttl/2 — the time the leader has to close its tenant connection before a
standby may open one.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable
from typing import Final

import nats.errors
import nats.js.errors
from nats.js.kv import KeyValue
from pydantic import ValidationError

from tenant_events.hub.messages import LeaseRecord
from tenant_events.hub.subjects import LEASE_KEY

log = logging.getLogger(__name__)

VALID_FRACTION: Final = 0.5  # of the TTL, after sending the last successful update
RENEW_FRACTION: Final = 0.25


def new_holder() -> LeaseRecord:
    """This process as a lease holder: host and pid say who it is, the random part makes it unique."""
    host = socket.gethostname()
    return LeaseRecord(
        holder=f"{host}:{os.getpid()}:{uuid.uuid4().hex[:8]}",
        host=host,
        pid=os.getpid(),
        acquired_at=time.time(),
    )


class Lease:
    """One collector's view of the lease; `valid()` is the fence every cursor update checks first."""

    def __init__(
        self, kv: KeyValue, ttl: float, holder: LeaseRecord, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.ttl = ttl
        self.holder = holder
        self._kv = kv
        self._clock = clock
        self._revision: int | None = None
        self._valid_until = 0.0
        self._payload = holder.to_bytes()

    def valid(self) -> bool:
        return self._revision is not None and self._clock() < self._valid_until

    async def current_holder(self) -> LeaseRecord | None:
        """Who holds the lease now (None when nobody does or the hub does not answer)."""
        try:
            entry = await self._kv.get(LEASE_KEY)
        except (TimeoutError, nats.js.errors.KeyNotFoundError, nats.errors.Error):
            return None
        try:
            return LeaseRecord.model_validate_json(entry.value or b"")
        except ValidationError:
            return None

    async def try_acquire(self) -> bool:
        """Take the lease if nobody holds it; False when someone does (or the hub does not answer)."""
        sent = self._clock()
        try:
            revision = await self._kv.create(LEASE_KEY, self._payload)
        except nats.js.errors.KeyWrongLastSequenceError:
            return False
        except (TimeoutError, nats.errors.Error) as exc:
            log.debug("lease: create failed: %s", exc)
            return False
        self._revision, self._valid_until = revision, sent + self.ttl * VALID_FRACTION
        return True

    async def acquire(self, poll: float, on_wait: Callable[[LeaseRecord | None], None] | None = None) -> None:
        """Wait until this process holds the lease; `on_wait(holder)` whenever the holder seen changes."""
        seen: object = object()
        while not await self.try_acquire():
            if on_wait is not None:
                holder = await self.current_holder()
                key = holder.holder if holder else None
                if key != seen:
                    seen = key
                    on_wait(holder)
            await asyncio.sleep(poll)

    async def _renew(self) -> bool | None:
        """True: renewed; False: lost for good (refused); None: no answer (try again while still valid)."""
        sent = self._clock()
        try:
            revision = await self._kv.update(LEASE_KEY, self._payload, last=self._revision)
        except nats.js.errors.KeyWrongLastSequenceError:
            self._revision = None
            return False
        except (TimeoutError, nats.errors.Error) as exc:
            log.debug("lease: renewal got no answer: %s", exc)
            return None
        self._revision, self._valid_until = revision, sent + self.ttl * VALID_FRACTION
        return True

    async def hold(self) -> str:
        """Renew until the lease is lost; returns why, in words."""
        every = self.ttl * RENEW_FRACTION
        renewed: bool | None = True
        while True:
            remaining = self._valid_until - self._clock()
            if remaining <= 0 or self._revision is None:
                self._revision = None
                return f"no answer from the hub for {self.ttl * VALID_FRACTION:g} s"
            await asyncio.sleep(min(every if renewed else every / 4, remaining))
            if self._valid_until - self._clock() <= 0:
                continue
            renewed = await self._renew()
            if renewed is False:
                return "another collector holds the lease"

    async def release(self) -> None:
        """Give the lease up at once (a clean stop), so a standby need not wait for it to lapse."""
        revision, self._revision = self._revision, None
        if revision is None:
            return
        try:
            await self._kv.delete(LEASE_KEY, last=revision)
        except (TimeoutError, nats.errors.Error) as exc:
            log.info("lease: could not release it (%s); it lapses within %g s", exc, self.ttl)
