"""Every event stored while the app runs is evaluated by the alert rules exactly once, even when the stream
re-sends events (duplicates inside a batch leave holes in seq): the real app, a real simulator re-sending every
3rd event, the real store. The per-type rule ("Events of chosen types", the opt-in kind that replaced the old
per-type notifications) is switched on for every type without notifying, so each stored event must be linked to
exactly one of its alerts."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from helpers.browser import act_as_browser
from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, profile_for, run_async, running_app, until
from tenant_events.alert_settings import WEEKDAYS, AlertSettings, WorkingHours
from tenant_events.auth.secret_store import MemorySecretStore
from tenant_events.settings import Settings, save_settings
from tenant_events.store import AlertInbox, EventReader
from tenant_events.wire import EventType

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]
_visits: list[asyncio.Future[str]] = []


def browser(url: str) -> None:
    _visits.append(asyncio.ensure_future(asyncio.to_thread(act_as_browser, url)))


def test_each_stored_event_is_evaluated_once_despite_duplicates(qloop, ui_paths, make_simulator):
    sim = make_simulator(seed=9, backlog=0, rate=60.0, heartbeat=0.25)
    sim.faults(duplicate_every=3)
    every_type = {
        "id": "event-types",
        "enabled": True,
        "notify": False,
        "include_test_events": True,
        "types": [t.value for t in EventType],
    }
    around_the_clock = WorkingHours(start="00:00", end="00:00", days=list(WEEKDAYS))  # never "off hours"
    save_settings(
        ui_paths, Settings(alerts=AlertSettings(rules=[every_type], working_hours=around_the_clock))
    )
    delivered: list[str] = []

    async def scenario() -> None:
        async with running_app(ui_paths, opener=browser, secret_store=MemorySecretStore()) as app:
            app.notifier.delivered.connect(lambda title, _how: delivered.append(title))
            session = await app.add_tenant(profile_for(sim, "acme"))
            assert session.is_signed_in
            reader = session.ui_reader
            await until(lambda: reader is not None and reader.head_seq() >= 150, 30, "150 events stored")
        # quitting evaluated the last commits before the database closed (runner.attach's before_close)

    run_async(qloop, scenario())
    for v in _visits:
        v.cancel()
    path = ui_paths.database_file("acme")
    with EventReader(path) as reader:
        stored = [e.seq for e, _ in reader.export_iter()]
        dropped = reader.duplicates_dropped()
    with AlertInbox(path) as inbox:
        alerts = inbox.alerts(limit=10_000)
        linked = [seq for a in alerts if a.rule_id == "event-types" for seq in inbox.event_seqs(a.id)]
    assert dropped > 0  # the simulator did re-send events, and the store dropped them
    again = [s for s, n in Counter(linked).items() if n > 1]
    assert again == [], f"evaluated more than once: {again[:5]}"
    assert sorted(linked) == stored  # none missed
    assert sum(a.event_count for a in alerts if a.rule_id == "event-types") == len(stored)
    assert delivered == []  # a rule that does not notify raises no notification; nothing per type either
