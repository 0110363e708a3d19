"""A routine server rotation (the stream's connection_timeout, then a reconnect that resumes at once) is not
"catching up" in the real app: the status bar and the tray stay live; a real catch-up (old events still to read)
still says so (tests/tenant/test_tenant_status.py)."""

from __future__ import annotations

import asyncio

import pytest

from helpers.browser import act_as_browser
from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, profile_for, run_async, running_app, until
from tenant_events.auth.secret_store import MemorySecretStore
from tenant_events.view.tenant_status import TrayState

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]
_visits: list[asyncio.Future[str]] = []


def browser(url: str) -> None:
    _visits.append(asyncio.ensure_future(asyncio.to_thread(act_as_browser, url)))


def test_rotations_stay_live(qloop, ui_paths, make_simulator):
    sim = make_simulator(seed=5, backlog=0, rate=4.0, heartbeat=0.2, rotate_after=1.5)

    async def scenario() -> None:
        async with running_app(ui_paths, opener=browser, secret_store=MemorySecretStore()) as app:
            session = await app.add_tenant(profile_for(sim, "acme"))
            await until(lambda: session.status.state is TrayState.LIVE, 30, "live")
            await until(lambda: session.link.stats.last_event_time, 20, "an event")
            seen: list[tuple[TrayState, str]] = []
            session.status_changed.connect(lambda s: seen.append((s.state, s.line())))
            start = sim.stats()["connections_total"]
            await until(lambda: sim.stats()["connections_total"] >= start + 3, 30, "three rotations")
            await until(lambda: session.status.state is TrayState.LIVE, 10, "live again")
            shown = [line for state, line in seen if state is TrayState.CATCHING_UP or "catching up" in line]
            assert not shown, shown
            assert "catching up" not in app.window.status_line.state_label.text()

    run_async(qloop, scenario(), timeout=120)
    for v in _visits:
        v.cancel()
