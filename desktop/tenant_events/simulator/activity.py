"""Drives tenant life into the log: the pre-generated backlog, live events at `--rate` with bursts, and
on-demand events for tests (`/_sim/emit`) and scenarios (scenarios.py).

Every event goes through `TenantLife` (consistency) and `EventLog.append` (ids, offsets, frames). About one
event in `test_purpose_every` carries `xpurpose: "test"`, the only value the live service uses
(docs/event-stream.md "Quirks"). Live traffic is routine by default (`live_mix`): no organization deletions, no
organization connection changes, no admin grants, no deletion waves at the population caps — the incidents
alert rules look for happen when a scenario acts them out. The backlog and `/_sim/emit` keep every kind.

`clock()` is the tenant's time: with `speed` N it runs N times faster than the wall clock from the start, so a
test sees five minutes of traffic, with its events five minutes apart, in fifteen seconds at speed 20.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from tenant_events.simulator.config import SimulatorConfig
from tenant_events.simulator.event_log import EventLog
from tenant_events.simulator.generator import TenantLife

log = logging.getLogger(__name__)
BACKLOG_SPACING = 0.5  # mean seconds between backlog events, so from_timestamp has a past to search


class Activity:
    """The only writer of the event log once the server runs."""

    def __init__(self, config: SimulatorConfig, event_log: EventLog) -> None:
        self.config = config
        self.log = event_log
        # Seeded by (seed, log length) so a restarted simulator continues with fresh, non-colliding ids.
        self.life = TenantLife(
            f"{config.seed}:{event_log.last_seq}",
            tenant_id="ten_" + "DemoTenant000001",
            tenant_seed=config.seed,
        )
        self._purpose_rng = self.life.rng
        self.paused = False
        self._started = time.time()

    def clock(self) -> float:
        """The tenant's time now (the wall clock when `speed` is 1)."""
        speed = self.config.speed
        now = time.time()
        return now if speed == 1 else self._started + (now - self._started) * speed

    def _purpose(self) -> str | None:
        every = self.config.test_purpose_every
        return "test" if every and self._purpose_rng.randrange(every) == 0 else None

    def emit(
        self, n: int, types: tuple[str, ...] | None = None, *, at: float | None = None, announce: bool = False
    ) -> int:
        """Append n events now (or at `at`); returns the last sequence number. With `announce` (a scenario), what
        the world had to gain first for them (a user, an organization, a membership) is sent before them, as
        the service would have: otherwise those never appear with their names."""
        ts = self.clock() if at is None else at
        for _ in range(n):
            name, data = self.life.next_event(ts, types)
            for made, obj in self.life.made if announce else ():
                self.log.append(made, {"object": obj, "context": self.life._context(made, obj)}, ts)
            # A scenario's event is the incident itself: never a test event, which the alert rules pass over (one
            # in `test_purpose_every` was, and the demo's alert for it, or a deletion of a wave, went missing).
            self.log.append(name, data, ts, purpose=None if announce else self._purpose())
        self.log.flush()
        return self.log.last_seq

    def emit_event(self, name: str, obj: dict[str, Any]) -> int:
        """Append one event of `name` about `obj` now (an incident's, scenarios.py); returns its sequence."""
        self.log.append(name, {"object": obj, "context": self.life._context(name, obj)}, self.clock())
        self.log.flush()
        return self.log.last_seq

    def fill_backlog(self, n: int) -> int:
        """Make sure at least n events exist, timed in the past and ending now; returns how many were added.

        The spacings are random, so their sum passes `missing × BACKLOG_SPACING` about half the time (by ~9 s for
        300 events): the tail would be timed after now, and the first live events, timed now, would come after
        events newer than they are. It stops at now instead."""
        missing = n - self.log.last_seq
        if missing <= 0:
            return 0
        started = time.perf_counter()
        rng = self.life.rng
        now = time.time()
        ts = now - missing * BACKLOG_SPACING
        batch = 50_000
        with self.log.store.bulk():
            for done in range(0, missing, batch):
                for _ in range(min(batch, missing - done)):
                    ts = min(ts + rng.expovariate(1 / BACKLOG_SPACING), now)
                    name, data = self.life.next_event(ts)
                    self.log.append(name, data, ts, purpose=self._purpose())
                self.log.flush()
        log.info("backlog: %d events in %.1f s", missing, time.perf_counter() - started)
        return missing

    def emit_routine(self, n: int) -> int:
        """Append n live events of the configured mix (routine: nothing alert-worthy)."""
        self.life.routine = self.config.live_mix == "routine"
        try:
            return self.emit(n)
        finally:
            self.life.routine = False

    async def run_live(self) -> None:
        """Append events at `rate` per second, with a burst every `burst_every` seconds (tenant time)."""
        rate, cfg = self.config.rate, self.config
        if rate <= 0:
            return
        next_burst = self.clock() + cfg.burst_every if cfg.burst_every else float("inf")
        interval = 1 / rate
        while True:
            await asyncio.sleep(self.life.rng.expovariate(1 / interval) / cfg.speed)
            if self.paused:
                continue
            n = 1
            if self.clock() >= next_burst:
                n, next_burst = cfg.burst_size, self.clock() + cfg.burst_every
            self.emit_routine(n)
