"""A burst of notifications (a catch-up raises many alerts in the same moment) asks the notification daemon
once whether it is there, and every one of them reaches it natively, as the real dunst receives them.
Before, each of the burst opened its own D-Bus client to ask; under load one of those asks timed out and
sent every later notification of the session to the tray (or nowhere, with no tray)."""

from __future__ import annotations

import asyncio
import logging

import pytest

from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, until
from helpers.notify_watch import NotifyWatch
from tenant_events.ui.alerts.desktop_notifier import Notifier

pytestmark = [pytest.mark.gui, pytest.mark.dbus, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


def test_a_burst_of_notifications_probes_the_daemon_once_and_all_go_native(qloop, dunst, caplog):
    notifier = Notifier()
    titles = [f"Burst alert {i}" for i in range(20)]

    async def scenario() -> list[str]:
        backends = await asyncio.gather(
            *(notifier.show(t, "body\nacme", "normal", lambda: None) for t in titles)
        )
        await until(lambda: len(watch.of("Burst alert")) == len(titles), 20, "all of the burst on the bus")
        return list(backends)

    caplog.set_level(logging.INFO, logger="tenant_events.ui.alerts.desktop_notifier")
    with NotifyWatch() as watch:
        backends = run_async(qloop, scenario(), timeout=60)
    assert backends == ["native"] * len(titles)
    asked = [r for r in caplog.records if "notification daemon capabilities" in r.getMessage()]
    assert len(asked) == 1, [r.getMessage() for r in caplog.records]
    assert sorted(n.summary for n in watch.of("Burst alert")) == sorted(titles)
