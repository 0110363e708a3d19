"""The delivery worker: empties one tenant database's outbox into the destinations, surviving anything.

    kick() (an alert was stored) ─▶ route: each new outbox row → one delivery per destination that receives it
                                    (a resolve: those that want resolves and were given the alert)
                                  ─▶ repeats: an unacknowledged critical alert again, per destination
                                  ─▶ a lane per destination with something due sends it, in order
                                  ─▶ sleep until the next retry, repeat, quiet-hours end, a lane's end or kick

Each destination is delivered on its own: a lane (a task) per destination sends its due deliveries in order,
and the worker goes on routing and starting other lanes meanwhile — a receiver that answers slowly, or
trickles its answer until the attempt's deadline (send.py), holds back no other destination. Stopping starts no
new send and gives the sends in flight `grace` seconds (STOP_WAIT_S unless told) to finish and record their
result; then they are ended (their sockets shut) and the worker stops: a send that did not finish stays
pending in the outbox and goes out on the next start, under the same dedup key.

Every state change is a transaction in the database before the next step, so a restart or a crash resumes where
it stopped: a delivery sent but not yet marked is sent again with the same dedup key (receivers that
de-duplicate see one incident). Failures back off exponentially with full jitter; a 429's Retry-After is
honoured; a refused URL or token stops the destination (with its reason) until its URL changes; what is still
undelivered after `horizon_s` (24 h) is given up and the alert shows an "undelivered" mark. A destination whose
URL cannot be read (the keyring did not answer) keeps its deliveries pending until it can. A failure, or a URL
that cannot be read, puts every due delivery of that destination back to wait in one transaction (however many
wait: a receiver down for an hour leaves hundreds, and a write per delivery competed with the store's writer
every pass). Given `shared` (a
team relay's outbox on the hub, tenant/team_alerts.py), each send first checks that this process may still send
and that no other relay delivered it, and its result is recorded there too.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import random
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeVar

from tenant_events.alerts.delivery import QuietTimes
from tenant_events.destinations.flood import flood_of
from tenant_events.destinations.message import alert_message, folded_message
from tenant_events.destinations.send import DEADLINE_S, Attempts, send
from tenant_events.destinations.send_thread import Sender, send_in_thread
from tenant_events.destinations.shared_deliveries import SharedDeliveries
from tenant_events.settings.destinations import DestinationProfile
from tenant_events.store.outbox import Delivery, Outbox, Unrouted
from tenant_events.values.alert_lifecycle import CATCH_UP_HOLD_S
from tenant_events.values.alerts import StoredAlert

log = logging.getLogger(__name__)
T = TypeVar("T")
HORIZON_S: Final = 24 * 3600.0
IDLE_POLL_S: Final = 30.0  # re-read the settings and look for work at least this often
STOP_WAIT_S: Final = (
    1.0  # stopping waits this long for the sends in flight (most answer by then), then ends them
)
SEND_GRACE_S: Final = 5.0  # past a send's deadline, a lane stops waiting for it (a name lookup hangs)


@dataclass(frozen=True, slots=True)
class Backoff:
    """Exponential backoff with full jitter: attempt n waits a random share (50–100 %) of base·2ⁿ, capped."""

    base: float = 2.0
    cap: float = 300.0

    def delay(self, attempts: int) -> float:
        return float(random.uniform(0.5, 1.0) * min(self.cap, self.base * 2.0 ** min(attempts, 30)))


UNREADABLE_RETRY_S: Final = 10.0  # a destination whose URL cannot be read now is tried again this often


@dataclass(frozen=True, slots=True)
class Target:
    """A destination with its whole URL (from the keyring) and the URL's id (a stop is for one URL); `problem`
    says why its URL cannot be read now (the keyring did not answer, the URL is not there): its deliveries are
    routed as usual and wait, pending, until it can be read, never routed past it."""

    profile: DestinationProfile
    url: str
    fingerprint: str
    problem: str = ""


Targets = Callable[[], dict[str, Target]]


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
        sender: Sender | None = None,
        deadline_s: float = DEADLINE_S,
        clock: Callable[[], float] = time.time,
        shared: SharedDeliveries | None = None,
        silenced: Callable[[StoredAlert], bool] = lambda _alert: False,
    ) -> None:
        """`sender` None: Apprise (send.py) with `deadline_s` for each attempt, ended when the worker stops;
        `silenced(alert)`: a silence holds the alert now (nothing is delivered for it, values/silences.py)."""
        self._database = database
        self._silenced = silenced
        self._shared = shared
        self._targets = targets
        self._quiet = quiet
        self.backoff = backoff
        self.horizon_s = horizon_s
        self._attempts = Attempts()
        self._sender = sender or functools.partial(send, attempts=self._attempts, deadline=deadline_s)
        self._send_wait = deadline_s + SEND_GRACE_S
        self._clock = clock
        self._lanes: dict[str, asyncio.Task[None]] = {}  # destination → its lane while it sends
        self._db = ThreadPoolExecutor(1, thread_name_prefix="outbox")
        self._outbox: Outbox | None = None
        self._next_repeat: float | None = None
        self._wake = asyncio.Event()
        self._closed = False
        self._grace = STOP_WAIT_S
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
            await self._end_lanes()
            outbox, self._outbox = self._outbox, None
            try:
                await self._call(outbox.close)
            finally:  # the outbox's thread ends with the worker, not whenever the worker is garbage collected
                await asyncio.to_thread(self._db.shutdown)

    async def close(self, grace: float = STOP_WAIT_S) -> None:
        """Stop: no new send; the sends in flight get `grace` seconds to finish before they are ended."""
        self._closed = True
        self._grace = grace
        self._wake.set()

    async def _end_lanes(self) -> None:
        """The lanes, given the grace to finish their sends in flight; then those are ended (their sockets
        shut) and what is still left is cancelled: its delivery stays pending in the outbox for the next start."""
        lanes = list(self._lanes.values())
        if not lanes:
            return
        _, late = await asyncio.wait(lanes, timeout=self._grace)
        if late:
            self._attempts.end()
            _, late = await asyncio.wait(late, timeout=1.0)
        for lane in late:
            lane.cancel()
        if late:
            log.info("stopped with %d alert send(s) unfinished: they go out on the next start", len(late))
            await asyncio.wait(late)

    async def step(self) -> float:
        """Route new outbox rows and start a lane for each destination with something due (one not already
        sending); returns the seconds until there is more to do (a lane's end wakes the worker sooner)."""
        outbox = self._outbox
        assert outbox is not None
        targets = await asyncio.to_thread(self._targets)  # the keyring may be read: never on the UI thread
        fingerprints = {n: t.fingerprint for n, t in targets.items()}
        await self._route(outbox, targets)
        every = {n: t.profile.repeat_minutes * 60 for n, t in targets.items()}
        self._next_repeat = await self._call(outbox.schedule_repeats, self._clock(), every)
        # The lanes first: one that ends while the stops are read has written its stop before it ended.
        held = set(self._lanes)  # a destination with a lane has its deliveries in hand
        held |= set(await self._call(outbox.stopped, fingerprints))
        due = await self._call(outbox.due, self._clock(), held)
        by_destination: dict[str, list[Delivery]] = {}
        for d in due:
            by_destination.setdefault(d.destination, []).append(d)
        for name, deliveries in by_destination.items():
            if not self._closed:
                lane = asyncio.create_task(
                    self._deliver(outbox, targets.get(name), deliveries), name=f"delivery-lane-{name}"
                )
                self._lanes[name] = lane
                lane.add_done_callback(functools.partial(self._lane_done, name))
        if by_destination:
            return 0.0  # more may be due (a page of 200, or deliveries held behind a failure)
        next_at = await self._call(outbox.next_due, held | set(self._lanes))
        soonest = [t for t in (next_at, self._next_repeat) if t is not None]
        if not soonest:
            return IDLE_POLL_S
        return min(IDLE_POLL_S, max(0.0, min(soonest) - self._clock()))

    def _lane_done(self, name: str, lane: asyncio.Task[None]) -> None:
        if self._lanes.get(name) is lane:
            del self._lanes[name]
        if not lane.cancelled() and (exc := lane.exception()) is not None:
            log.warning("alert deliveries to %s paused: %s", name, exc)  # storage trouble: the next pass
        self._wake.set()

    async def _route(self, outbox: Outbox, targets: dict[str, Target]) -> None:
        rows = await self._call(outbox.unrouted)
        if not rows:
            return
        # no destination (the default): every row goes to none, with no alert to read and no silence to check
        if not targets:
            await self._call(outbox.route, [(row, [], {}) for row in rows], self._clock())
            return
        alerts = await self._call(outbox.alerts, list(dict.fromkeys(r.alert_id for r in rows)))
        now = self._clock()
        routed: list[tuple[Unrouted, list[str], dict[str, float]]] = []
        for row in rows:
            alert = alerts.get(row.alert_id)
            if alert is None or self._silenced(alert):
                routed.append((row, [], {}))  # a silenced alert's version goes to no destination
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
        folded: set[int] = set()  # indexes sent within an earlier delivery's fold
        for i, d in enumerate(deliveries):
            if i in folded:
                continue
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
            # its URL cannot be read now: this delivery and the rest wait for it (no attempt counted)
            if target.problem:
                name, at = target.profile.name, now + UNREADABLE_RETRY_S
                await self._call(outbox.hold, name, target.fingerprint, None, at, target.problem, now)
                return
            alert = await self._call(outbox.alert, d.alert_id)
            if alert is None:
                await self._call(outbox.give_up, d, "the alert was deleted")
                continue
            if self._silenced(alert):  # silenced after it was routed (or a repeat of it)
                await self._call(outbox.give_up, d, "silenced")
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
            read = functools.partial(self._call, outbox.alert)
            fold = await flood_of(read, alert, deliveries, i, folded, self._silenced)
            if shared is not None and fold:
                fold = await self._not_sent_before(outbox, shared, fold, now)
            sent = [(alert, d), *((a, x) for x, a in fold)]
            why = await self._call(outbox.resolution, alert.id) if d.kind == "resolved" else None
            if shared is not None:
                message = shared.folded(sent) if fold else shared.message(alert, d, why)
            elif fold:
                message = folded_message([(a, x.version) for a, x in sent], self._database.stem)
            else:
                message = alert_message(alert, d.kind, d.version, d.nth, self._database.stem, resolution=why)
            outcome = await send_in_thread(self._sender, target.url, message, self._send_wait)
            if self._closed and outcome.kind != "delivered":
                return  # ended by the stop: it stays due, as it was, for the next start
            now = self._clock()
            if shared is not None:
                state = "delivered" if outcome.kind == "delivered" else "pending"
                for a, x in sent:
                    await shared.record(a, x, state, attempts + 1, outcome.reason)
            if outcome.kind == "delivered":
                await self._call(outbox.delivered_all, [each for _, each in sent], now)
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
            # the receiver is down or busy: every other due delivery to it waits with this one
            await self._call(outbox.hold, name, target.fingerprint, d, now + delay, outcome.reason, now)
            return

    async def _not_sent_before(
        self,
        outbox: Outbox,
        shared: SharedDeliveries,
        fold: list[tuple[Delivery, StoredAlert]],
        now: float,
    ) -> list[tuple[Delivery, StoredAlert]]:
        """The fold without the firings another relay delivered before a takeover (marked delivered here)."""
        left: list[tuple[Delivery, StoredAlert]] = []
        for x, other in fold:
            done, _ = await shared.prior(other, x)
            if done:
                await self._call(outbox.delivered, x, now)
                self._changed()
            else:
                left.append((x, other))
        return left

    def _changed(self) -> None:
        for callback in list(self.on_change):
            try:
                callback()
            except Exception:
                log.exception("a delivery observer failed")
