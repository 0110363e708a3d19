"""The disk under the app's databases fills while it follows a tenant (a small tmpfs mounted for the test; needs
root, skipped otherwise): the app says in words that the disk is full and where, keeps what was committed and the
window's rows, and — once space is freed — goes on by itself from the stored cursor with every event of the
simulator's log stored once, in order. Quit is clean whether the disk was freed or is still full."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.browser import act_as_browser
from helpers.fixtures_engine import reference_ids
from helpers.fixtures_ui import (
    QT_OFFSCREEN_NOISE,
    profile_for,
    run_async,
    running_app,
    save_screenshot,
    until,
)
from helpers.small_disk import remount, small_disk_at
from helpers.window_shown import (
    counted,
    in_time_order,
    named,
    named_as_the_directory,
    shown_count,
    until_named,
    window_rows,
)
from tenant_events.auth.secret_store import MemorySecretStore
from tenant_events.paths import AppPaths
from tenant_events.store import EventReader

pytestmark = [
    pytest.mark.gui,
    pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE),
    pytest.mark.expect_warning_logs,
    pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root"),
]
_visits: list[asyncio.Future[str]] = []


def browser(url: str) -> None:
    _visits.append(asyncio.ensure_future(asyncio.to_thread(act_as_browser, url)))


@pytest.fixture
def small_tenants_disk(ui_paths: AppPaths) -> Iterator[Path]:
    """The app's tenants/ folder on a 3 MB tmpfs: room for the schema and a couple of thousand events, not 6 000."""
    with small_disk_at(ui_paths.databases_dir) as mnt:
        yield mnt


def stored_ids(db: Path) -> list[str]:
    with EventReader(db) as reader:
        return [e.event_id for e, _ in reader.export_iter()]


def stored_count(db: Path) -> int:
    try:
        with EventReader(db) as reader:
            return reader.count()
    except Exception:  # (a reader cannot always open on a full disk: 0 until it can)
        return 0


@pytest.mark.parametrize("freed", [True, False], ids=["space-freed", "quit-while-full"])
def test_a_full_disk_under_the_app_is_said_and_the_app_goes_on_once_space_is_freed(
    qloop, ui_paths, small_tenants_disk, make_simulator, freed
):
    sim = make_simulator(seed=3, backlog=6_000, rate=0, heartbeat=0.2, burst_every=0)  # 3x the disk
    db = ui_paths.database_file("acme")

    async def scenario() -> None:
        async with running_app(ui_paths, opener=browser, secret_store=MemorySecretStore()) as app:
            session = await app.add_tenant(profile_for(sim, "acme"))
            w = app.window
            state = w.status_line.state_label
            await until(lambda: "disk is full" in state.text(), 120, "the app saying the disk is full")
            told = state.text()
            assert "paused" in told and "acme.sqlite3" in told and "free disk space" in told, told
            assert state.toolTip() == told  # the whole line on hover: the window cuts it at its edge
            kept = await asyncio.to_thread(stored_count, db)
            assert kept > 0, "nothing was committed before the disk filled (make the tmpfs larger)"
            await until(
                lambda: w.tenant == "acme" and w.model.rowCount() > 0, 60, "the rows kept in the window"
            )
            # Paused, the window shows what was stored: names, the count and the histogram, rows in time order.
            await until(lambda: named(w) and counted(w), 30, "the names, count and histogram while full")
            assert in_time_order(w), [e.time for e in window_rows(w)]
            save_screenshot(w, "full-disk-told" if freed else "full-disk-quit-while-full")
            if not freed:
                return  # Quit now, the stream still paused on the full disk (running_app: it must end with 0)
            await asyncio.to_thread(remount, small_tenants_disk, "size=200m")
            total = int(sim.stats()["events"])
            await until(lambda: stored_count(db) >= total, 120, "every event stored once space was freed")
            await until(lambda: "disk is full" not in state.text(), 30, "the pause over")
            await until(lambda: w.model.rowCount() >= total, 60, "the window's rows after the pause")
            await until_named(w, db, "the names after the pause")
            await until(
                lambda: counted(w),
                30,
                lambda: (
                    f"the count and histogram after the pause: {w.filter_bar._count_text!r}, "
                    f"{len(w.histogram.buckets)} buckets"
                ),
            )
            await until(lambda: shown_count(w) >= total, 30, "the count after the pause")
            assert in_time_order(w), [e.time for e in window_rows(w)]
            await named_as_the_directory(w, session.link.ui_reader.directory())
            save_screenshot(w, "full-disk-live-again")

    run_async(qloop, scenario(), timeout=300)
    ids = stored_ids(db)
    assert len(ids) == len(set(ids)), "an event stored twice"
    assert ids == reference_ids(sim, len(ids)), "an event lost or out of order"
    if freed:
        assert len(ids) == int(sim.stats()["events"])
