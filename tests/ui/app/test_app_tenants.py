"""The real app over real simulators (in-process, port 0): sign-in as the browser, live rows, filters,
detail JSON, pause/resume, a clock jump nudging the engine, a second tenant, and a clean quit."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest

from helpers.browser import act_as_browser
from helpers.fixtures_ui import (
    QT_OFFSCREEN_NOISE,
    other_tasks,
    profile_for,
    run_async,
    running_app,
    save_screenshot,
    signal_future,
    until,
)
from helpers.slack import bound
from tenant_events.auth.secret_store import MemorySecretStore
from tenant_events.ui.window.table.event_table_model import Col
from tenant_events.view.tenant_status import TrayState

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


BROWSER_VISITS: list[asyncio.Future] = []


def browser(url: str) -> None:
    """The user's browser: opens the login page and presses "Continue as demo admin" on its own time, like
    a real one (the app's opener returns at once; the callback then reaches its loopback listener)."""
    BROWSER_VISITS.append(asyncio.ensure_future(asyncio.to_thread(act_as_browser, url)))


def test_two_tenants_live_filter_detail_pause_wake_quit(qloop, ui_paths, make_simulator):
    first = make_simulator(seed=1, backlog=300, rate=30.0, heartbeat=0.25)
    second = make_simulator(seed=2, backlog=40, rate=0.0)
    threads_before = {t.ident for t in threading.enumerate()}
    fixture_threads: set[int | None] = set()

    async def scenario() -> None:
        async with running_app(ui_paths, opener=browser, secret_store=MemorySecretStore()) as app:
            w = app.window
            assert (
                app.first_run.welcome is not None and app.first_run.welcome.isVisible()
            )  # no tenant yet: the welcome window
            session = await app.add_tenant(profile_for(first, "acme"))
            assert session.is_signed_in
            await until(lambda: w.model.rowCount() >= 300, what="backlog rows in the table")
            await until(lambda: session.status.state is TrayState.LIVE, what="live")
            rows = w.model.rowCount()
            await until(lambda: w.model.rowCount() > rows, what="live events arriving")
            assert "live" in w.state_label.text()
            save_screenshot(w, "main-window-live")

            # filter by type: every row shown has that type, and the count matches the store's
            target = w.model.event_at(0)
            w.filter_bar.set_types({target.type})
            await until(lambda: not w.model.counting, 10, "the filtered total")
            assert {w.model.event_at(r).type for r in range(min(50, w.model.rowCount()))} == {target.type}
            assert w.model.rowCount() == session.ui_reader.reader.count(w.model.event_filter)
            # and by text (FTS over id, summary and data): the event id finds exactly that event
            updated = signal_future(w.aggregates_updated)  # before the query: it may answer at once
            w.filter_bar.search.setText(target.event_id)
            w.filter_bar.search.returnPressed.emit()
            await until(lambda: not w.first_page.busy, 10, "the query's first page (read on a worker)")
            assert w.model.rowCount() == 1 and w.model.event_at(0).event_id == target.event_id
            await updated
            assert w.filter_bar.count_label.text() == "1 event"
            save_screenshot(w, "filter-in-use")

            # select it: the detail pane shows its JSON, exactly as stored
            w.step(1)
            assert w.detail.shown is not None and w.detail.shown.event_id == target.event_id
            await until(lambda: w.detail.pretty, 10, "the event's JSON (read on a worker)")
            shown = json.loads(w.detail.pretty)
            assert shown["event"]["id"] == target.event_id
            assert target.event_id in w.detail.browser.toPlainText()
            save_screenshot(w, "detail-pane")
            w.filter_bar.search.clear()
            w.filter_bar.clear_types()
            w.filter_bar.search.returnPressed.emit()

            # pause / resume (the window's Ctrl+P action)
            w.pause_action.trigger()
            await until(lambda: session.status.state is TrayState.PAUSED, what="paused")
            assert "paused" in w.state_label.text()
            head = session.ui_reader.head_seq()
            first.emit(5)
            await asyncio.sleep(0)  # one loop turn; nothing may arrive while paused (checked below)
            w.pause_action.trigger()
            await until(lambda: session.status.state is TrayState.LIVE, what="live after resume")
            await until(lambda: session.ui_reader.head_seq() >= head + 5, what="events emitted while paused")

            # a wall-clock jump (resume from sleep) nudges the engine: it reconnects at once and is live again
            states: list[tuple[float, TrayState]] = []
            session.status_changed.connect(lambda st: states.append((time.monotonic(), st.state)))
            reconnects = session.link.stats.reconnects
            real_wall = app.wake._wall
            app.wake._wall = lambda: real_wall() + 3600.0
            t0 = time.monotonic()
            with_woke = signal_future(app.wake.woke)
            app.wake.check_clock()
            (reason,) = await with_woke
            assert "clock jump" in reason
            await until(lambda: any(s is TrayState.RECONNECTING for _, s in states), what="reconnect")
            await until(lambda: states and states[-1][1] is TrayState.LIVE, what="live again")
            live_after = states[-1][0] - t0
            # at once: no backoff wait (a loaded machine stretches the reconnect itself)
            assert live_after < bound(1.0), f"live again {live_after:.2f} s after resume"
            assert session.link.stats.reconnects == reconnects  # a nudge is not counted as a failure

            # a second tenant: its own sign-in, stream and store; the selector switches the table
            other = await app.add_tenant(profile_for(second, "globex"))
            assert other.is_signed_in and set(app.sessions) == {"acme", "globex"}
            w.filter_bar.tenant_box.setCurrentText("globex")
            assert w.tenant == "globex"
            await until(lambda: w.model.rowCount() >= 40, what="second tenant's rows")
            assert {w.model.data(w.model.index(r, Col.TENANT)) for r in range(10)} != set()
            assert w.model.rowCount() == other.ui_reader.reader.count()
            w.filter_bar.tenant_box.setCurrentText("acme")
            # (counted on a worker thread, never on the window's: the first page shows at once, the rest follows)
            await until(lambda: w.model.rowCount() >= 300, what="the first tenant's rows again")
            fixture_threads.update(
                t.ident for t in threading.enumerate() if t.name.startswith(("simulator", "uvicorn"))
            )
        # quit: no task left on the loop, every tenant stopped and its database closed
        leftover = other_tasks()
        assert leftover == [], leftover
        assert all(s.link.monitor is None and s.ui_reader is None for s in app.sessions.values())

    run_async(qloop, scenario(), timeout=150)
    # Python threads the app started (the simulators' uvicorn threads belong to the fixtures; _DummyThreads
    # are qasync's executor QThreads, owned and joined by the loop when it closes)
    extra = [
        t
        for t in threading.enumerate()
        if t.ident not in threads_before
        and not isinstance(t, threading._DummyThread)
        and t.ident not in fixture_threads
    ]
    assert extra == [], f"threads left behind: {extra}"
