"""The relay's mover into the team's shared archive (docs/archive.md "Team archive").

    relay LEADER ─▶ TenantLink(HubFrom: the hub's own events) ─▶ `<name>-lake` database (the relay's copy)
                 └▶ every `every` seconds while the lease holds: archive_keeper.keep(lake, fence=lease)
                      ─▶ events older than the live tier's setting into the lake, each once (archive_lake.py)
                 └▶ every TIDY_EVERY seconds: the lake's retention (the archive's setting), DuckLake's upkeep
    viewers      ─▶ their own database, read together with the lake (store/team_view.py), never writing it

The relay moves its copy of the hub's events, not the hub itself: the hub keeps events for its own retention,
which may end before they are old enough to move. A relay that takes the lease over starts its own copy from
what the hub still holds; what its predecessor moved is found in the lake by identity and not added again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Final

from nats.aio.client import Client as NATS

from tenant_events.errors import UserFixableError
from tenant_events.hub.connection import HubOptions
from tenant_events.hub.subjects import HubNames
from tenant_events.paths import AppPaths
from tenant_events.store import StoreWriter
from tenant_events.store.archive_keeper import KeeperPass, keep
from tenant_events.store.archive_lake import LakeBusy, expire, tidy
from tenant_events.tenant.link import TenantLink
from tenant_events.tenant.sources import HubFrom
from tenant_events.thread_priority import in_background
from tenant_events.values.retention import Retention
from tenant_events.values.team_archive import Lake

log = logging.getLogger(__name__)

MOVE_EVERY: Final = 600.0  # seconds between the relay's moves into the lake
TIDY_EVERY: Final = 3600.0  # seconds between DuckLake's upkeep (archive_lake.tidy)


def lake_database(name: str) -> str:
    """The relay's own copy of the hub's events, which it moves from (the profile's database stays the tenant's)."""
    return f"{name}-lake"


class LakeMover:
    """The relay's `leader_work` for the team archive: move while holding the lease, stop with it."""

    def __init__(
        self,
        name: str,
        paths: AppPaths,
        hub: HubOptions,
        names: HubNames,
        lake: Lake,
        policy: Retention,
        every: float = MOVE_EVERY,
        on_note: Callable[[str], None] = lambda _: None,
    ) -> None:
        self.name = lake_database(name)
        self.paths, self.hub, self.names, self.lake = paths, hub, names, lake
        # No rules run on the copy: an event may move as soon as the directory and the index have taken it in.
        self.policy = replace(policy, settle_seconds=0.0)
        self.every = every
        self._note = on_note
        self.moved = 0
        self._tidied = time.monotonic()  # (the first upkeep an hour into the lease)

    def _pass(self, writer: StoreWriter, fence: Callable[[], bool]) -> tuple[KeeperPass, int]:
        """One move of what is due (on a worker thread), and every TIDY_EVERY seconds the lake's retention (the
        archive's setting, `--keep-archive`) and DuckLake's upkeep; returns the pass and the events dropped."""
        done, dropped = keep(writer, self.policy, lake=self.lake, fence=fence), 0
        if fence() and time.monotonic() - self._tidied >= TIDY_EVERY:
            if self.policy.keep_archive_days is not None:
                cutoff_ms = int((time.time() - self.policy.keep_archive_days * 86400) * 1000)
                dropped = expire(self.lake, cutoff_ms, fence)
            tidy(self.lake)
            self._tidied = time.monotonic()
        return done, dropped

    async def __call__(self, nc: NATS, fence: Callable[[], bool]) -> None:
        link = TenantLink(
            self.name, self.paths, HubFrom(self.hub, self.names.tenant, hub_time=True, team_archive=self.lake)
        )
        await link.start()
        self._note(f"moving events older than the live tier into the team archive from {self.name}")
        said = ""
        running: asyncio.Future[tuple[KeeperPass, int]] | None = None
        try:
            while fence():
                monitor = link.monitor
                writer = monitor.store_writer if monitor is not None else None
                if writer is not None:
                    running = asyncio.ensure_future(in_background(self._pass, writer, fence))
                    try:
                        done, dropped = await asyncio.shield(running)
                        said = ""
                        if dropped:
                            self._note(
                                f"{dropped} events older than the archive's setting left the team archive"
                            )
                        if done.moved:
                            self.moved += done.moved
                            self._note(
                                f"{done.moved} events moved into the team archive ({self.moved} so far)"
                            )
                    except (LakeBusy, UserFixableError) as exc:
                        if str(exc) != said:  # said once while it lasts
                            said = str(exc)
                            self._note(f"the team archive: {said}; trying again")
                await asyncio.sleep(self.every)
        finally:
            if running is not None:  # a move in progress ends (its fence fails) before the database closes
                with contextlib.suppress(BaseException):
                    await running
            await link.close()
