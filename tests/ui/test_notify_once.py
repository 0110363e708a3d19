"""Every event stored while the app runs is offered to the notification policy exactly once, even when the
stream re-sends events (duplicates inside a batch leave holes in seq, so a commit's first/last seq cannot be
trusted): the real app, a real simulator re-sending every 3rd event, the real store."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from helpers.browser import act_as_browser
from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, running_app, until
from tenant_events.auth.secret_store import MemorySecretStore
from tenant_events.settings import make_profile
from tenant_events.store import EventReader
from tenant_events.wire import EventType

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]
_visits: list[asyncio.Future[str]] = []


def browser(url: str) -> None:
    _visits.append(asyncio.ensure_future(asyncio.to_thread(act_as_browser, url)))


def test_each_stored_event_is_offered_once_despite_duplicates(qloop, ui_paths, make_simulator):
    sim = make_simulator(seed=9, backlog=0, rate=60.0, heartbeat=0.25)
    sim.faults(duplicate_every=3)
    offered: list[str] = []

    async def scenario() -> None:
        async with running_app(ui_paths, opener=browser, secret_store=MemorySecretStore()) as app:
            app.set_notify_types({t.value for t in EventType}, save=False)
            real_offer = app.notifier.offer

            def record(events):  # type: ignore[no-untyped-def]
                offered.extend(e.event_id for e in events)
                real_offer(events)

            app.notifier.offer = record
            profile = make_profile(
                name="acme", domain=sim.auth_url.split("//")[1], auth_url=sim.auth_url,
                base_url=sim.base_url, client_id=sim.demo_client_id,
            )  # fmt: skip
            session = await app.add_tenant(profile)
            assert session.is_signed_in
            await until(lambda: len(offered) >= 150, wait_s=30, what="150 events offered")
            app.set_paused(True)
            await asyncio.sleep(0.5)  # the last commits reach the notifier
            stats = sim.stats()
            path = ui_paths.database_file("acme")
        with EventReader(path) as reader:
            stored = [e.event_id for e, _ in reader.export_iter()]
            dropped = reader.duplicates_dropped()
        assert dropped > 0, stats  # the simulator did re-send events, and the store dropped them
        again = [i for i, n in Counter(offered).items() if n > 1]
        assert again == [], f"offered more than once: {again[:5]}"
        assert offered == stored[: len(offered)]  # none missed, in stored order
        assert len(stored) - len(offered) < 200  # at most what was committed after the pause/at quit

    run_async(qloop, scenario())
    for v in _visits:
        v.cancel()
