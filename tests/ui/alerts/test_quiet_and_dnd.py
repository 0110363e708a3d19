"""Quiet hours and a timed do-not-disturb: notifications are held inside them (alerts/delivery.QuietTimes, the
one place that decides), and the tray's DND (1 h / until tomorrow) is written to the settings file and honoured
by the next start of the app (the quiet-hours ranges on their own: tests/alerts/test_quiet_hours.py)."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timedelta

import pytest

from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, running_app
from tenant_events.settings import load_settings, save_settings


@pytest.mark.gui
@pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)
def test_timed_dnd_is_saved_and_survives_a_restart(qloop, ui_paths):
    settings = load_settings(ui_paths)
    settings.notifications.quiet_hours = ("22:00", "07:00")
    save_settings(ui_paths, settings)

    async def first_run() -> None:
        async with running_app(ui_paths) as app:
            quiet_times = app.alerts.notes.quiet
            assert quiet_times.settings.quiet_hours == ("22:00", "07:00")  # quiet hours reach the one decider
            app.set_dnd(3600.0)
            assert quiet_times.state(time.time()).reason == "do_not_disturb"
            await asyncio.gather(*app.tasks)  # the settings file is written in the background

    run_async(qloop, first_run())
    saved = load_settings(ui_paths).notifications.do_not_disturb_until
    assert saved is not None
    assert abs(saved - (datetime.now() + timedelta(hours=1)).timestamp()) < 60

    async def second_run(seconds: float) -> None:
        async with running_app(ui_paths) as app:
            assert app.alerts.notes.quiet.state(time.time()).reason == "do_not_disturb"  # after a restart
            app.set_dnd(seconds)
            await asyncio.gather(*app.tasks)

    run_async(qloop, second_run(-1.0))  # "until tomorrow": 08:00 tomorrow, local time
    tomorrow = load_settings(ui_paths).notifications.do_not_disturb_until
    assert tomorrow is not None
    when = datetime.fromtimestamp(tomorrow)
    assert (when.date() - datetime.now().date()).days == 1 and (when.hour, when.minute) == (8, 0)

    run_async(qloop, second_run(0.0))  # "Notifications back on"
    assert load_settings(ui_paths).notifications.do_not_disturb_until is None

    async def third_run() -> None:
        async with running_app(ui_paths) as app:
            assert app.alerts.notes.quiet.state(time.time()).reason != "do_not_disturb"

    run_async(qloop, third_run())
