"""A burst of notifications (a catch-up raises many alerts in the same moment) asks the notification daemon
once whether it is there, and every one of them reaches it natively, as the real dunst receives them.
Before, each of the burst opened its own D-Bus client to ask; under load one of those asks timed out and
sent every later notification of the session to the tray (or nowhere, with no tray)."""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import uuid

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


class HeldProbe(Notifier):
    """The real notifier; while `holding`, a notification waits where it asks whether the daemon is there (the
    first ask of a session takes up to seconds) until `go` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.holding = False
        self.waiting, self.go = asyncio.Event(), asyncio.Event()

    async def probe(self) -> bool:
        if self.holding:
            self.waiting.set()
            await self.go.wait()
        return await super().probe()


def _closed() -> list[str]:
    """Summaries of the notifications dunst has closed (taken away, or dismissed)."""
    out = subprocess.run(["dunstctl", "history"], capture_output=True, text=True, timeout=10).stdout
    return [str(n["summary"]["data"]) for n in json.loads(out or '{"data": [[]]}')["data"][0]]


def test_a_notification_taken_away_while_it_is_being_sent_does_not_stay(qloop, dunst):
    """An alert is said and, before its notification has reached the daemon, acknowledged or resolved (its
    notification taken away): the notification must not come and stay (a critical one stays until dismissed)."""
    notifier = HeldProbe()
    title = f"Acknowledged alert {uuid.uuid4().hex[:8]}"

    async def scenario() -> None:
        assert await notifier.probe()
        notifier.holding = True
        showing = asyncio.ensure_future(
            notifier.show(title, "body\nacme", "critical", lambda: None, "acme\x1f7")
        )
        await asyncio.wait_for(notifier.waiting.wait(), 20)
        await notifier.withdraw("acme\x1f7")  # acknowledged meanwhile
        notifier.holding = False
        notifier.go.set()
        assert await showing == "native"
        await until(lambda: title in _closed(), 20, "the notification taken away once it came")

    try:
        with NotifyWatch() as watch:
            run_async(qloop, scenario(), timeout=60)
    finally:
        run_async(qloop, notifier.withdraw_all())
    assert [n.summary for n in watch.of(title)] == [title]
