"""TenantMonitor: the facade the UI and CLI use — start, observe, pause/resume, retention, clean stop."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from typing import Any

import pytest

from helpers.fixtures_engine import OLD
from tenant_events.monitor import TenantMonitor
from tenant_events.paths import AppPaths
from tenant_events.store import EventFilter
from tenant_events.stream.engine import EngineConfig
from tenant_events.stream.tokens import StaticTokenProvider
from tenant_events.values.retention import Retention
from tenant_events.values.stream_states import StreamState


def test_monitor_runs_two_tenants_and_stops_cleanly(make_simulator, tmp_path):
    sims = [make_simulator(backlog=200, heartbeat=0.2, seed=s) for s in (1, 2)]
    paths = AppPaths.resolve(tmp_path).ensure()

    async def scenario():
        monitors = [
            TenantMonitor(
                f"t{i}",
                paths,
                EngineConfig(s.base_url, from_timestamp=OLD, name=f"t{i}"),
                StaticTokenProvider(s.mint_token()),
                retention=Retention(max_live_rows=150, interval=0.1, settle_seconds=0),
            )
            for i, s in enumerate(sims)
        ]
        states = {m.name: [] for m in monitors}
        for m in monitors:
            m.on_state.append(states[m.name].append)
            await m.start()
        for _ in range(500):
            if all(m.stats.events_stored >= 200 for m in monitors):
                break
            await asyncio.sleep(0.02)
        for m in monitors:  # a retention pass after the backlog is in moves what is beyond the live cap
            with m.open_reader() as reader:
                for _ in range(1200):
                    if reader.archived_upto() >= 50:
                        break
                    await asyncio.sleep(0.05)
        first = monitors[0]
        first.source.pause()
        for _ in range(100):
            if first.state.state is StreamState.PAUSED:
                break
            await asyncio.sleep(0.02)
        assert first.state.state is StreamState.PAUSED
        first.source.resume()
        for m in monitors:
            await m.stop()
            assert not m.running and m.state.state is StreamState.STOPPED
        return monitors, states

    monitors, states = asyncio.run(scenario())
    for m in monitors:
        with m.open_reader() as reader:
            # beyond the live cap of 150: the oldest 50 moved to the archive, read as before
            assert reader.count() == 200 and reader.archived_upto() == 50
            assert reader.cursor().offset
        assert [s.state for s in states[m.name]][-1] is StreamState.STOPPED


def test_stopping_the_monitor_while_the_window_still_reads_leaves_the_wal_empty(make_simulator, tmp_path):
    """The window's quit: its sessions stop their monitors first and close their readers after (ui/app/desktop_app.py)."""
    sim = make_simulator(backlog=3000, heartbeat=0.05, rate=50, burst_every=0)
    paths = AppPaths.resolve(tmp_path).ensure()
    monitor = TenantMonitor(
        "quit",
        paths,
        EngineConfig(sim.base_url, from_timestamp=OLD, name="quit"),
        StaticTokenProvider(sim.mint_token()),
    )
    wal = monitor.database_file.with_name(monitor.database_file.name + "-wal")

    async def scenario() -> tuple[int, int]:
        await monitor.start()
        readers = [monitor.open_reader(), monitor.open_reader()]  # the table and the aggregates
        try:
            for _ in range(1000):
                if monitor.stats.events_stored >= 3100:
                    break
                readers[0].page_before(EventFilter(), None, 50)  # the table follows the commits
                readers[1].counts_by_type()
                await asyncio.sleep(0.01)
            before = wal.stat().st_size
            await monitor.stop()
            return before, wal.stat().st_size if wal.exists() else 0
        finally:
            for reader in readers:
                reader.close()

    before, after = asyncio.run(scenario())
    assert before > 1024 * 1024, before  # there was a WAL to fold in
    assert after <= 1024 * 1024, f"{after} bytes of WAL left after the stop"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="niceness is per thread on Linux only")
def test_the_tiers_upkeep_runs_below_the_priority_of_the_loop(make_simulator, tmp_path, monkeypatch):
    """A month's move into the archive is minutes of CPU (Python, FTS5 and DuckDB on one thread): on a two-core
    machine it must leave the window's thread its share first."""
    from tenant_events.store import archive_keeper
    from tenant_events.thread_priority import BACKGROUND_NICENESS

    real_keep = archive_keeper.keep
    seen: list[int] = []

    def keep_noting_its_priority(*args: Any, **kwargs: Any) -> Any:
        seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        return real_keep(*args, **kwargs)

    monkeypatch.setattr(archive_keeper, "keep", keep_noting_its_priority)
    sim = make_simulator(backlog=200, heartbeat=0.2)
    paths = AppPaths.resolve(tmp_path).ensure()
    monitor = TenantMonitor(
        "low",
        paths,
        EngineConfig(sim.base_url, from_timestamp=OLD, name="low"),
        StaticTokenProvider(sim.mint_token()),
        retention=Retention(max_live_rows=150, interval=0.1, settle_seconds=0),
    )

    async def scenario() -> int:
        await monitor.start()
        with monitor.open_reader() as reader:
            for _ in range(1200):
                if reader.archived_upto() >= 50:
                    break
                await asyncio.sleep(0.05)
        await monitor.stop()
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    ours = asyncio.run(scenario())
    with monitor.open_reader() as reader:
        assert reader.archived_upto() == 50 and reader.count() == 200
    assert seen and set(seen) == {min(ours + BACKGROUND_NICENESS, 19)}
