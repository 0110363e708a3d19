"""The delivery worker: empties one tenant database's outbox into the destinations, surviving anything.

    kick() (an alert was stored) ─▶ route: each new outbox row → one delivery per destination that receives it
                                    (a resolve: those that want resolves and were given the alert)
                                  ─▶ repeats: an unacknowledged critical alert again, per destination
                                  ─▶ send what is due, each destination on its own (a slow one holds no other)
                                  ─▶ sleep until the next retry, repeat, quiet-hours end or kick

Every state change is a transaction in the database before the next step, so a restart or a crash resumes where
it stopped: a delivery sent but not yet marked is sent again with the same dedup key (receivers that
de-duplicate see one incident). Failures back off exponentially with full jitter; a 429's Retry-After is
honoured; a refused URL or token stops the destination (with its reason) until its URL changes; what is still
undelivered after `horizon_s` (24 h) is given up and the alert shows an "undelivered" mark. Given `shared` (a
team relay's outbox on the hub, tenant/team_alerts.py), each send first checks that this process may still send
and that no other relay delivered it, and its result is recorded there too.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol, TypeVar

from tenant_events.alerts.delivery import QuietTimes
from tenant_events.destinations.message import AlertMessage, alert_message
from tenant_events.destinations.send import Outcome, send
from tenant_events.settings.destinations import DestinationProfile
from tenant_events.store.outbox import Delivery, Outbox, Unrouted
from tenant_events.values.alert_lifecycle import CATCH_UP_HOLD_S
from tenant_events.values.alerts import StoredAlert

log = logging.getLogger(__name__)
T = TypeVar("T")
HORIZON_S: Final = 24 * 3600.0
IDLE_POLL_S: Final = 30.0  # re-read the settings and look for work at least this often


@dataclass(frozen=True, slots=True)
class Backoff:
    """Exponential backoff with full jitter: attempt n waits a random share (50–100 %) of base·2ⁿ, capped."""

    base: float = 2.0
    cap: float = 300.0

    def delay(self, attempts: int) -> float:
        return float(random.uniform(0.5, 1.0) * min(self.cap, self.base * 2.0 ** min(attempts, 30)))


@dataclass(frozen=True, slots=True)
class Target:
    """A destination with its whole URL (from the keyring) and the URL's fingerprint."""

    profile: DestinationProfile
    url: str
    fingerprint: str


Targets = Callable[[], dict[str, Target]]
Sender = Callable[[str, Any], Outcome]


class SharedDeliveries(Protocol):
    """A team's delivery state kept beside the database (the relays' shared outbox on the hub): a delivery
    another relay made is not sent again, and every relay sends an alert version under the same dedup key."""

    def may_send(self) -> bool:
        """False once this process may no longer deliver (it lost the lease): deliveries stay pending."""

    def message(self, alert: StoredAlert, delivery: Delivery) -> AlertMessage: ...

    async def prior(self, alert: StoredAlert, delivery: Delivery) -> tuple[bool, int]:
        """(delivered already, attempts so far) as any relay recorded them: a takeover goes on counting."""
        ...

    async def record(
        self, alert: StoredAlert, delivery: Delivery, state: str, attempts: int, error: str = ""
    ) -> None: ...


class DeliveryWorker:
    """Delivers one tenant database's outbox; `run()` until `close()`."""

    def __init__(
        self,
        database: Path,
        targets: Targets,
        quiet: Callable[[], QuietTimes | None] = lambda: None,
        *,
        backoff: Backoff = Backoff(),  # frozen
        horizon_s: float = HORIZON_S,
        sender: Sender = send,
        clock: Callable[[], float] = time.time,
        shared: SharedDeliveries | None = None,
    ) -> None:
        self._database = database
        self._shared = shared
        self._targets = targets
        self._quiet = quiet
        self.backoff = backoff
        self.horizon_s = horizon_s
        self._sender = sender
        self._clock = clock
        self._db = ThreadPoolExecutor(1, thread_name_prefix="outbox")
        self._outbox: Outbox | None = None
        self._next_repeat: float | None = None
        self._wake = asyncio.Event()
        self._closed = False
        self.delivered = 0  # counters for tests and the bench
        self.on_change: list[Callable[[], None]] = []  # a delivery was made, stopped or given up

    def kick(self, *_: object) -> None:
        """Look at the outbox now (an alert was stored, a destination was changed)."""
        self._wake.set()

    async def _call(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._db, self._locked, fn, *args)

    def _locked(self, fn: Callable[..., T], *args: Any) -> T:
        """On the outbox thread, under the outbox's lock: the store may close its connection between calls."""
        outbox = self._outbox
        if outbox is None:
            return fn(*args)
        with outbox.lock:
            return fn(*args)

    async def run(self) -> None:
        self._outbox = await self._call(Outbox, self._database)
        try:
            while not self._closed:
                self._wake.clear()
                try:
                    wait = await self.step()
                except Exception as exc:  # storage trouble: try again later, nothing is lost
                    log.warning("alert deliveries paused for %.0f s: %s", IDLE_POLL_S, exc)
                    wait = IDLE_POLL_S
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout=max(0.0, wait))
        finally:
            outbox, self._outbox = self._outbox, None
            try:
                await self._call(outbox.close)
            finally:  # the outbox's thread ends with the worker, not whenever the worker is garbage collected
                await asyncio.to_thread(self._db.shutdown)

    async def close(self) -> None:
        self._closed = True
        self._wake.set()

    async def step(self) -> float:
        """Route new outbox rows and send what is due; returns the seconds until there is more to do."""
        outbox = self._outbox
        assert outbox is not None
        targets = await asyncio.to_thread(self._targets)  # the keyring may be read: never on the UI thread
        fingerprints = {n: t.fingerprint for n, t in targets.items()}
        await self._route(outbox, targets)
        every = {n: t.profile.repeat_minutes * 60 for n, t in targets.items()}
        self._next_repeat = await self._call(outbox.schedule_repeats, self._clock(), every)
        stopped = await self._call(outbox.stopped, fingerprints)
        due = await self._call(outbox.due, self._clock(), set(stopped))
        by_destination: dict[str, list[Delivery]] = {}
        for d in due:
            by_destination.setdefault(d.destination, []).append(d)
        if by_destination:
            await asyncio.gather(
                *(self._deliver(outbox, targets.get(n), ds) for n, ds in by_destination.items())
            )
            return 0.0  # more may be due (a page of 200, or deliveries held behind a failure)
        stopped = await self._call(outbox.stopped, fingerprints)
        next_at = await self._call(outbox.next_due, set(stopped))
        soonest = [t for t in (next_at, self._next_repeat) if t is not None]
        if not soonest:
            return IDLE_POLL_S
        return min(IDLE_POLL_S, max(0.0, min(soonest) - self._clock()))

    async def _route(self, outbox: Outbox, targets: dict[str, Target]) -> None:
        rows = await self._call(outbox.unrouted)
        if not rows:
            return
        alerts = await self._call(outbox.alerts, list(dict.fromkeys(r.alert_id for r in rows)))
        now = self._clock()
        routed: list[tuple[Unrouted, list[str], dict[str, float]]] = []
        for row in rows:
            alert = alerts.get(row.alert_id)
            if alert is None:
                routed.append((row, [], {}))
                continue
            names = [
                n
                for n, t in targets.items()
                if t.profile.receives(alert.severity, alert.rule_id, alert.tenant)
            ]
            if row.kind == "resolved" and names:
                given = await self._call(outbox.received, row.alert_id)
                names = [n for n in names if n in given and targets[n].profile.sends_resolved]
            holds = {n: h for n in names if (h := self._held_until(targets[n], alert.severity, now))}
            if alert.catch_up and row.kind == "firing":
                # a catch-up grows its alert chunk by chunk: it goes out once, as it is after the last chunk
                holds = {n: max(holds.get(n, now), now + CATCH_UP_HOLD_S) for n in names}
            routed.append((row, names, holds))
        await self._call(outbox.route, routed, now)

    def _held_until(self, target: Target, severity: str, now: float) -> float | None:
        """When quiet hours or do-not-disturb end, if they hold this destination's delivery back now."""
        quiet = self._quiet()
        if quiet is None or not target.profile.held_by_quiet or quiet.allows(severity, now):  # type: ignore[arg-type]
            return None
        until = quiet.state(now).until
        return until if until is not None else now + IDLE_POLL_S

    async def _deliver(self, outbox: Outbox, target: Target | None, deliveries: list[Delivery]) -> None:
        """Send one destination's due deliveries in order; after a failure the rest wait with it."""
        for i, d in enumerate(deliveries):
            if self._closed:
                return  # stopping: the send in flight ended; the rest stay due for the next run
            now = self._clock()
            if target is None:
                await self._call(outbox.give_up, d, "the destination was removed")
                continue
            if now - d.queued_at >= self.horizon_s:
                await self._call(outbox.give_up, d, f"not delivered within {self.horizon_s / 3600:g} h")
                self._changed()
                continue
            alert = await self._call(outbox.alert, d.alert_id)
            if alert is None:
                await self._call(outbox.give_up, d, "the alert was deleted")
                continue
            held = self._held_until(target, alert.severity, now)
            if held is not None:
                await self._call(outbox.retry, d, held, "held by quiet hours or do-not-disturb", False)
                continue
            shared, attempts = self._shared, d.attempts
            if shared is not None:
                if not shared.may_send():
                    return  # the lease went to another relay: it delivers what is left
                done, before = await shared.prior(alert, d)
                if done:
                    await self._call(outbox.delivered, d, now)  # another relay did, before a takeover
                    self._changed()
                    continue
                attempts = max(attempts, before)  # its backoff goes on where the last relay's stopped
                message = shared.message(alert, d)
            else:
                message = alert_message(alert, d.kind, d.version, d.nth, self._database.stem)
            outcome = await asyncio.to_thread(self._sender, target.url, message)
            now = self._clock()
            if shared is not None:
                state = "delivered" if outcome.kind == "delivered" else "pending"
                await shared.record(alert, d, state, attempts + 1, outcome.reason)
            if outcome.kind == "delivered":
                await self._call(outbox.delivered, d, now)
                self.delivered += 1
                self._changed()
                continue
            name = target.profile.name
            if outcome.kind == "stop":
                log.warning("alert destination %s stopped: %s (fix its URL to resume)", name, outcome.reason)
                await self._call(outbox.stop, name, target.fingerprint, outcome.reason, now)
                await self._call(outbox.retry, d, now, outcome.reason, True)
                self._changed()
                return
            delay = outcome.retry_after if outcome.retry_after is not None else self.backoff.delay(attempts)
            log.info(
                "alert %d to %s not delivered (%s); retrying in %.1f s",
                d.alert_id,
                name,
                outcome.reason,
                delay,
            )
            await self._call(outbox.retry, d, now + delay, outcome.reason, True)
            await self._call(outbox.note_error, name, target.fingerprint, outcome.reason)
            for rest in deliveries[i + 1 :]:  # the receiver is down or busy: the others wait with this one
                await self._call(outbox.retry, rest, now + delay, outcome.reason, False)
            return

    def _changed(self) -> None:
        for callback in list(self.on_change):
            try:
                callback()
            except Exception:
                log.exception("a delivery observer failed")
