"""A team alert's desktop notification in a viewer's app goes away once the alert is in hand, wherever that
happened: resolved by `tenant-events triage` beside the app, or acknowledged by a teammate on the hub. Such a
triage reaches the app through the hub and the stored alert, not through rules of its own, and a critical
notification stays until it is dismissed: left up, it would say an alert still needs someone.

The real app follows a hub profile (its secret in the real keyring) of a real nats-server, a real relay
evaluates for the team (from the simulator) and delivers to a real webhook, and dunst shows the notifications."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest

from helpers.fixtures_team_buckets import TeamBuckets
from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, dunst_displayed, run_async, running_app, until
from helpers.notify_watch import NotifyWatch
from helpers.team_alerts import Receiver, marked, relay, team_destination, wait_until
from tenant_events.auth.secret_store import open_secret_store
from tenant_events.hub.credentials import add_hub_profile, remove_hub_profile
from tenant_events.hub.triage import TriageBoard, alert_key

REAL = os.environ.get("TENANT_EVENTS_REAL_KEYRING") == "1"
pytestmark = [
    pytest.mark.gui,
    pytest.mark.dbus,
    pytest.mark.hub,
    pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE),
    pytest.mark.skipif(not REAL, reason="needs ./run test (gnome-keyring on D-Bus)"),
]


def test_a_team_alerts_notification_goes_once_a_command_or_a_teammate_takes_it_in_hand(
    qloop, ui_paths, make_simulator, nats_single, httpserver, dunst, tmp_path
):
    hub = nats_single
    sim = make_simulator(heartbeat=0.2, rate=0)
    receiver = Receiver(httpserver)
    keyring = open_secret_store().store
    add_hub_profile(
        ui_paths,
        keyring,
        hub.credentials.viewer,
        name="acme",
        hub_urls=hub.urls.split(","),
        hub_tenant="acme",
        auth="password",
        user="viewer",
    )
    relay_dir = tmp_path / "relay"
    with team_destination([relay_dir], receiver.url) as name:
        collector = relay(sim, hub, sim.mint_token(ttl=3600), relay_dir, name)
        try:
            collector.wait_for("alerts: evaluating the team's alerts")
            wait_until(lambda: marked(hub), "the relay's mark on the hub", [collector])
            run_async(qloop, _scenario(ui_paths, sim, hub), timeout=180)
        finally:
            collector.stop()
            remove_hub_profile(ui_paths, keyring, "acme")


async def _scenario(ui_paths, sim, hub) -> None:
    await asyncio.to_thread(subprocess.run, ["dunstctl", "close-all"], check=True, timeout=10)
    await until(lambda: dunst_displayed() == 0, 10, "dunst cleared (earlier tests' critical ones)")
    with NotifyWatch() as watch:
        async with running_app(ui_paths) as app:
            for n in (1, 2):  # two team alerts, each said on the desktop (critical: up until dismissed)
                await asyncio.to_thread(sim.emit, 1, ["group.created"])
                await until(lambda n=n: len(watch.of("Group created (team)")) >= n, 60, f"notification {n}")
                await until(lambda n=n: dunst_displayed() == n, 10, f"{n} on the screen")
            first, second = sorted(
                (e.alert for e in app.alerts.book.entries() if e.profile == "acme"), key=lambda a: a.id
            )

            # resolved by the command line beside the app (the team's triage, through the hub)
            command = ["triage", "resolve", str(first.id), "--tenant", "acme", "--note", "expected"]
            done = await asyncio.to_thread(
                subprocess.run,
                [sys.executable, "-m", "tenant_events", *command, "--data-dir", str(ui_paths.data_dir)],
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert done.returncode == 0, done.stderr
            await until(lambda: dunst_displayed() == 1, 30, "the resolved alert's notification taken away")

            # acknowledged by a teammate on the hub
            _nc, board = await TeamBuckets(hub).board(TriageBoard, "viewer2")
            try:
                await board.put(alert_key(second.rule_id, second.first_event_id), "acknowledged", "on it")
                await until(
                    lambda: dunst_displayed() == 0, 30, "the acknowledged alert's notification taken away"
                )
            finally:
                await board.stop()
                await _nc.close()
