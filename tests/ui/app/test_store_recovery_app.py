"""The write-ahead log removed under the running app (a cleaning tool, a stray `rm`): the app says what happened
in words, opens the database again by itself — its window's readers and the alert inbox with it — and resumes
from the stored cursor: every event of the simulator's log stored once, in order. Quit after it is clean.

The window stays what it was while the store is paused (rows in time order, their names, the count and the
histogram), and after the reopen it looks as before: every shown row's summary named from the entity directory
as the directory knows it, the histogram and the count there."""

from __future__ import annotations

import asyncio
import os

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
from helpers.window_shown import (
    counted,
    in_time_order,
    named,
    named_as_the_directory,
    names_by_id,
    names_lost,
    shown_count,
    window_rows,
)
from tenant_events.auth.secret_store import MemorySecretStore
from tenant_events.errors import StorageError
from tenant_events.store import EventReader

pytestmark = [
    pytest.mark.gui,
    pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE),
    pytest.mark.expect_warning_logs,
]
_visits: list[asyncio.Future[str]] = []


def browser(url: str) -> None:
    _visits.append(asyncio.ensure_future(asyncio.to_thread(act_as_browser, url)))


def stored_ids(db) -> list[str]:
    with EventReader(db) as reader:
        return [e.event_id for e, _ in reader.export_iter()]


def stored_count(db) -> int:
    """What a reader opened now finds; 0 while the app is still opening the database again (it says so)."""
    try:
        with EventReader(db) as reader:
            return reader.count()
    except StorageError as exc:
        assert "opens the database again" in str(exc), str(exc)
        return 0


def test_the_log_removed_under_the_app_is_said_and_the_app_recovers_with_nothing_lost(
    qloop, ui_paths, make_simulator
):
    sim = make_simulator(seed=7, backlog=300, rate=8.0, heartbeat=0.2, burst_every=0)
    db = ui_paths.database_file("acme")
    lines: list[str] = []

    async def scenario() -> None:
        async with running_app(ui_paths, opener=browser, secret_store=MemorySecretStore()) as app:
            session = await app.add_tenant(profile_for(sim, "acme"))
            w = app.window
            await until(
                lambda: w.tenant == "acme" and w.model.rowCount() >= 300, 60, "the backlog in the window"
            )
            # What a user sees before anything goes wrong: names, the count, the histogram, time order.
            await until(lambda: named(w) and counted(w), 30, "the window's names, count and histogram")
            assert in_time_order(w), [e.time for e in window_rows(w)]
            directory = session.link.ui_reader.directory()
            await named_as_the_directory(w, directory)
            session.status_changed.connect(lambda s: lines.append(s.line()))
            before = names_by_id(w)
            for suffix in ("-wal", "-shm"):
                os.remove(db.with_name(db.name + suffix))
            state = w.status_line.state_label
            await until(lambda: "removed or replaced by another program" in state.text(), 30, "told")
            told = state.text()
            assert "acme.sqlite3" in told and "paused" in told and "opens the database again" in told, told
            assert state.toolTip() == told  # the whole line on hover: the window cuts it at its edge
            # Paused, the window keeps what it showed while it says why: every row named before stays named (a row
            # stored a moment before the log went may not have been named yet, and is shown as it was).
            assert not names_lost(w, before), names_lost(w, before)
            assert any(names_by_id(w).get(i) for i, was in before.items() if was), (before, names_by_id(w))
            assert counted(w), (w.filter_bar._count_text, len(w.histogram.buckets))
            assert in_time_order(w), [e.time for e in window_rows(w)]
            save_screenshot(w, "store-recovery-told")
            # Recovered: the files are back, the writer stores again, the window follows.
            sent = int(sim.stats()["events"])
            await until(lambda: stored_count(db) >= sent + 16, 60, "storing again after the reopen")
            assert all(db.with_name(db.name + s).exists() for s in ("-wal", "-shm"))
            await until(lambda: w.model.rowCount() >= sent + 16, 30, "the window's rows after the reopen")
            assert "disk I/O error" not in " ".join(lines)
            # As before: names from the directory opened again, the count and the histogram, in time order.
            await until(
                lambda: named(w) and counted(w), 30, "the names, count and histogram after the reopen"
            )
            assert in_time_order(w), [e.time for e in window_rows(w)]
            await named_as_the_directory(w, directory)
            await until(lambda: shown_count(w) >= sent, 30, "the count")
            save_screenshot(w, "store-recovery-live-again")

    run_async(qloop, scenario(), timeout=240)
    ids = stored_ids(db)
    assert len(ids) == len(set(ids)), "an event stored twice"
    assert ids == reference_ids(sim, len(ids)), "an event lost or out of order"
