"""The app's alert notifications under real traffic, watched on the bus as dunst receives them:

* ordinary demo traffic (the simulator's default mix: 2 events a second, a burst of 25 every 30 s, no scenario)
  for five minutes of the tenant's time raises at most 3 notifications with default settings. The simulator's
  `--speed 20` compresses the five tenant minutes into ~15 s of wall time; events carry the tenant's time, so the
  rules' windows see five minutes;
* a backlog caught up after being away becomes one "While you were away" notification, not one per alert.
"""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from helpers.browser import act_as_browser
from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, profile_for, run_async, running_app, until
from helpers.notify_watch import NotifyWatch
from tenant_events.auth.secret_store import MemorySecretStore

pytestmark = [pytest.mark.gui, pytest.mark.dbus, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]
_visits: list[asyncio.Future[str]] = []
FIVE_MINUTES = 2 * 300 + 25 * 9  # events: 300 tenant seconds at 2/s and the bursts


def browser(url: str) -> None:
    _visits.append(asyncio.ensure_future(asyncio.to_thread(act_as_browser, url)))


def test_five_minutes_of_ordinary_demo_traffic_raise_at_most_3_notifications(
    qloop, ui_paths, make_simulator, dunst
):
    sim = make_simulator(
        seed=1, backlog=0, rate=2.0, burst_every=30.0, burst_size=25, speed=20.0, heartbeat=0.2
    )
    start = sim.stats()["last_seq"]

    async def scenario() -> None:
        async with running_app(ui_paths, opener=browser, secret_store=MemorySecretStore()) as app:
            session = await app.add_tenant(profile_for(sim, "demo"))
            reader = session.ui_reader
            assert reader is not None
            await until(lambda: sim.stats()["last_seq"] - start >= FIVE_MINUTES, 60, "five tenant minutes")
            await until(lambda: reader.head_seq() >= FIVE_MINUTES, 20, "all of it stored")
            runner = session.link.rules.runner
            assert runner is not None
            await runner.drain()
            await asyncio.sleep(1.0)  # notifications handed to the notifier reach the bus
            app.set_paused(True)
            return app.alerts.book.entries()

    with NotifyWatch() as watch:
        entries = run_async(qloop, scenario(), timeout=150)
    ours = [n for n in watch.seen if n.app == "Tenant Events"]
    assert len(ours) <= 3, ours
    # with default settings the only rule this traffic can meet is "changes outside working hours" (it depends on
    # when the test runs), and it groups an hour of them into one alert
    assert {e.alert.rule_id for e in entries} <= {"off-hours"}
    assert len(entries) <= 1
    for v in _visits:
        v.cancel()


def test_a_caught_up_backlog_is_one_while_you_were_away_notification(qloop, ui_paths, make_simulator, dunst):
    # ~17 minutes of backlog (every kind of event, incidents included), most of it older than the 5 minutes
    # after which evaluated events count as a catch-up
    sim = make_simulator(seed=3, backlog=2000, rate=0.0, heartbeat=0.2)

    async def scenario() -> list:
        async with running_app(ui_paths, opener=browser, secret_store=MemorySecretStore()) as app:
            shown: list = []
            app.alerts.notes.shown.connect(lambda _tenant, planned: shown.append(planned))
            session = await app.add_tenant(profile_for(sim, "acme"))
            await until(lambda: any(p.summary for p in shown), 40, "the catch-up summary")
            await asyncio.sleep(1.0)
            entries = app.alerts.book.entries()
            return [shown, entries, session]

    with NotifyWatch() as watch:
        shown, entries, _session = run_async(qloop, scenario(), timeout=150)
    summaries = [p for p in shown if p.summary]
    caught_up = [e.alert for e in entries if e.alert.catch_up]
    live = [e.alert for e in entries if not e.alert.catch_up and e.alert.notify]
    assert len(caught_up) >= 2, entries  # the backlog held incidents of several rules
    assert len(summaries) == 1 and set(summaries[0].alert_ids) == {a.id for a in caught_up if a.notify}
    assert summaries[0].title == "While you were away"
    # the live ones (the backlog's last minutes) one each, and again at each firing folded into a critical or
    # warning alert (a new version is said); an info alert says itself once (which of the backlog's last firings
    # count as live moves with how fast the app starts)
    told = Counter(i for p in shown if not p.summary for i in p.alert_ids)
    severity = {e.alert.id: e.alert.severity for e in entries}
    assert set(told) == {a.id for a in live}, ([(p.alert_ids, p.title) for p in shown], live)
    assert all(n == 1 or severity[i] != "info" for i, n in told.items()), told
    seen = [n for n in watch.seen if n.app == "Tenant Events"]
    away = [n for n in seen if n.summary == "While you were away"]
    assert len(away) == 1 and away[0].body.endswith("\nacme") and " × " in away[0].body
    assert not away[0].body.startswith("While you were away")  # said once, in the title
    assert len(seen) == len(shown)
    for v in _visits:
        v.cancel()
