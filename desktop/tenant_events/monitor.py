"""The running part of one tenant link: token provider + stream engine + store, started and stopped as one.

    tenant/link.py (TenantLink) ─▶ TenantMonitor ─▶ StreamEngine ─▶ StoreWriter (writer thread) ─▶ <tenant>.sqlite3
                                                └▶ TokenProvider (auth/ session, static env token, client credentials)

The front ends never hold one: the tenant link (tenant/link.py) adds sign-in, readers, commit ranges and the
alert rules around it. A profile read from a team hub runs a hub viewer (hub/viewer.py) instead of the engine: pass `source`, a
factory that gets the writer and returns any `EventSource`. One monitor per tenant profile; several run side by
side on one loop. Observers are plain callbacks, called on
the loop's thread: `on_state(StateChange)`, `on_commit(CommitResult)`; the monitor hands its lists to each engine it
starts, so the engine calls them itself.
Shutdown order (docs/architecture.md "Threads"): cancel the stream task → commit what is pending → `before_close` hooks (the alert
rules evaluate the last commits, alerts/runner.py) → close the writer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Protocol

from tenant_events.paths import AppPaths
from tenant_events.store import CommitResult, EventReader, OpenNotice, StoreWriter, archive_keeper, team_view
from tenant_events.stream.engine import EngineConfig, StreamEngine
from tenant_events.stream.tokens import TokenProvider
from tenant_events.thread_priority import in_background
from tenant_events.values.retention import Retention
from tenant_events.values.stream_states import EngineStats, StateChange, StreamState
from tenant_events.values.team_archive import Lake

log = logging.getLogger(__name__)


class EventSource(Protocol):
    """What a monitor runs and observes: the stream engine, or a hub viewer."""

    on_state: list[Callable[[StateChange], None]]
    on_commit: list[Callable[[CommitResult], None]]
    stats: EngineStats
    state: StateChange

    async def run(self) -> StateChange: ...

    def pause(self) -> None: ...

    def resume(self) -> None: ...

    def nudge(self) -> None: ...

    def stop(self) -> None: ...


class TenantMonitor:
    """Follows one tenant into its own database; `start()` → running, `stop()` → flushed and closed."""

    def __init__(
        self,
        name: str,
        paths: AppPaths,
        config: EngineConfig,
        tokens: TokenProvider | None,
        *,
        retention: Retention | None = None,
        source: Callable[[StoreWriter], EventSource] | None = None,
        team_archive: Lake | None = None,
        reads_team: bool = False,
    ) -> None:
        """`tokens` may be None only with a `source` (a hub viewer holds no tenant credentials). `reads_team`:
        the database is read with `team_archive` (None: with none), recorded in it at start (store/team_view.py),
        and the upkeep lets go of live events the team archive holds instead of archiving them itself."""
        self.name = name
        self.paths = paths
        self.config = config
        self.retention = retention
        self.on_state: list[Callable[[StateChange], None]] = []
        self.on_commit: list[Callable[[CommitResult], None]] = []
        self.before_close: list[Callable[[], Awaitable[None]]] = []  # awaited in stop(), writer still open
        # While one says True, the writer's idle work (indexing) waits (store/writer.py idle_waits_for)
        self.idle_waits_for: list[Callable[[], bool]] = []
        self._tokens = tokens
        self._source = source
        self._writer: StoreWriter | None = None
        self._engine: EventSource | None = None
        self._task: asyncio.Task[StateChange] | None = None
        self._retention_task: asyncio.Task[None] | None = None
        self.team_archive = team_archive
        self._reads_team = reads_team
        self.notice: OpenNotice | None = None

    @property
    def database_file(self) -> Path:
        return self.paths.database_file(self.name)

    @property
    def state(self) -> StateChange:
        return self._engine.state if self._engine else StateChange(StreamState.STOPPED, "not started")

    @property
    def stats(self) -> EngineStats:
        return self._engine.stats if self._engine else EngineStats()

    @property
    def store_writer(self) -> StoreWriter | None:
        """The database's writer while started (its thread also runs the alert rules, alerts/runner.py)."""
        return self._writer

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def start(self) -> None:
        """Open the store (off the loop: the integrity check reads the file) and start following the stream."""
        if self.running:
            return
        if self._writer is None:
            self._writer = await asyncio.to_thread(StoreWriter, self.database_file)
            self.notice = self._writer.notice
            self._writer.idle_waits_for = self.idle_waits_for  # handed down, as the engine's observers
            if self._reads_team:
                writer, lake = self._writer, self.team_archive
                await asyncio.to_thread(
                    lambda: writer.run_archive_job(lambda c: team_view.record(c, lake)).result()
                )
        engine: EventSource
        if self._source is not None:
            engine = self._source(self._writer)
        else:
            assert self._tokens is not None, "a tenant stream needs a token provider"
            engine = StreamEngine(self.config, self._tokens, self._writer)
        engine.on_state, engine.on_commit = self.on_state, self.on_commit  # handed down, not forwarded
        self._engine = engine
        self._task = asyncio.create_task(engine.run(), name=f"monitor-{self.name}")
        if self.retention is not None:
            self._retention_task = asyncio.create_task(self._retention_loop(), name=f"retention-{self.name}")

    async def wait(self) -> StateChange:
        """Until the engine ends by itself (terminal state) or is stopped; returns its last state."""
        assert self._task is not None, "start() first"
        return await self._task

    @property
    def source(self) -> EventSource | None:
        """The engine (or hub viewer) of the latest start, None before: pause, resume, nudge and stop it
        directly (stop() is safe from a signal handler; `wait()` then returns)."""
        return self._engine

    async def stop(self) -> None:
        """Stop the stream, commit what was received, close the database."""
        if self._retention_task is not None:
            self._retention_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._retention_task
            self._retention_task = None
        if self._engine is not None and self._task is not None:
            self._engine.stop()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        for hook in list(self.before_close):
            try:
                await hook()
            except Exception:
                log.exception("%s: a shutdown step failed", self.name)
        if self._writer is not None:
            await asyncio.to_thread(self._writer.close)
            self._writer = None

    def open_reader(self) -> EventReader:
        """A new read connection for the caller's thread (the UI's table model, an export)."""
        return EventReader(self.database_file)

    async def _retention_loop(self) -> None:
        """The tiers' upkeep (docs/archive.md): move what is due to the archive, merge, expire, tidy up; off the
        loop (writing Parquet takes seconds), each catalog change on the writer thread."""
        assert self.retention is not None
        while True:
            if self._writer is not None:
                try:
                    await in_background(
                        archive_keeper.keep, self._writer, self.retention, lake=self.team_archive
                    )
                except Exception:
                    log.exception("%s: archive pass failed", self.name)
            await asyncio.sleep(self.retention.interval)
