"""The demo from first start to an alert opened from its notification, on a real desktop session (Xvfb +
session D-Bus + dunst, via `./run test`):

demo start (the simulator as a child process) → sign-in through its login page (the test is the browser) →
events appear → the demo scenario's first incident raises an alert → its notification shown by a real dunst →
invoking its action opens the alert in the inbox → its event opens in the table with its JSON → quit leaves no task and no child process. Plus: the child dies with a killed app.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from helpers.browser import act_as_browser
from helpers.fixtures_ui import (
    QT_OFFSCREEN_NOISE,
    dunst_displayed,
    other_tasks,
    run_async,
    running_app,
    save_screenshot,
    signal_future,
    until,
)
from helpers.slack import bound
from tenant_events.auth.secret_store import MemorySecretStore
from tenant_events.ui.window.table.event_table_model import Col

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]
DEMO_ARGS = [
    "--seed",
    "5",
    "--rate",
    "2",
    "--speed",
    "4",
    "--backlog",
    "200",
    "--heartbeat",
    "0.5",
    "--ephemeral",
]
_visits: list[asyncio.Future[str]] = []


def browser(url: str) -> None:
    """The system browser: visits the login page and presses "Continue as demo admin" on its own time."""
    _visits.append(asyncio.ensure_future(asyncio.to_thread(act_as_browser, url)))


@pytest.mark.dbus
def test_demo_sign_in_events_notification_click_selects_event(qloop, ui_paths, dunst):
    async def scenario() -> int:
        async with running_app(
            ui_paths, demo=True, opener=browser, secret_store=MemorySecretStore(), simulator_args=DEMO_ARGS
        ) as app:
            w = app.window
            # earlier tests' notifications may still be up (dunst sorts critical ones first): start clean
            await asyncio.to_thread(subprocess.run, ["dunstctl", "close-all"], check=True)
            shown: list = []  # every alert notification from the start: the backlog's come first
            app.alerts.notes.shown.connect(lambda tenant, planned: shown.append((tenant, planned)))
            delivered: list[str] = []
            app.notifier.delivered.connect(lambda title, how: delivered.append(f"{title}/{how}"))
            await until(lambda: app.first_run.simulator is not None, 30, "the demo simulator child")
            pid = app.first_run.simulator.pid
            assert psutil.Process(pid).ppid() == os.getpid()
            await until(
                lambda: "demo" in app.sessions and app.sessions["demo"].is_signed_in, 60, "demo sign-in"
            )
            assert _visits and _visits[-1].done() and "code=" in _visits[-1].result()
            await until(lambda: w.tenant == "demo" and w.model.rowCount() >= 200, 30, "backlog rows")
            rows = w.model.rowCount()
            await until(lambda: w.model.rowCount() > rows, 30, "live events")

            # the demo acts out its scenario: an admin role granted 40 tenant seconds in (10 s at --speed 4)
            admin = await until(
                lambda: [(t, p) for t, p in shown if p.title == "Admin role assigned"], 60, "the demo's alert"
            )
            tenant, planned = admin[0]
            assert tenant == "demo" and planned.urgency == "critical"
            await until(lambda: "Admin role assigned/native" in delivered, 10, "delivered to dunst")
            await until(lambda: dunst_displayed() > 0, 10, "dunst showing the notification")
            save_screenshot(w, "demo-live")

            # the user clicks it: dunst invokes the default action of its first notification (critical ones sort
            # first, and this is the only critical one) → the alert opens
            w.hide()
            opened = signal_future(app.alerts.notes.alert_requested, 15)
            await asyncio.to_thread(subprocess.run, ["dunstctl", "action", "0"], check=True)
            tenant, alert_id = await opened
            assert (tenant, alert_id) == ("demo", planned.alert_ids[0])
            inbox = app.alerts.inbox
            assert inbox is not None and inbox.isVisible()
            current = inbox.current()
            assert current is not None and current.alert.id == alert_id and current.alert.read
            assert current.alert.rule_id == "admin-role"
            assert inbox.event_list.count() == 1 and "role.assigned" in inbox.event_list.item(0).text()
            save_screenshot(inbox, "demo-notification-opened-alert")

            # the event behind it, opened from the inbox, is selected in the table with its JSON
            inbox.event_list.setCurrentRow(0)
            inbox._event_activated(inbox.event_list.item(0))
            seq = current.alert.last_seq
            await until(lambda: w.detail.shown is not None and w.detail.shown.seq == seq, 10, "detail")
            await until(lambda: w.detail.pretty, 10, "the event's JSON (read on a worker)")
            event_id = w.detail.shown.event_id
            assert event_id == current.alert.last_event_id
            assert w.isVisible()
            row = w.table.currentIndex().row()
            assert w.model.data(w.model.index(row, Col.ID)) == event_id
            assert event_id in w.detail.browser.toPlainText() and '"specversion"' in w.detail.pretty
            inbox.close()
            save_screenshot(w, "demo-notification-opened-event")
            sim = app.first_run.simulator
        assert sim is not None and not sim.alive() and app.first_run.simulator is None
        assert other_tasks() == []
        return pid

    pid = run_async(qloop, scenario(), timeout=200)
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def _cmdline(p: psutil.Process) -> str:
    try:
        return " ".join(p.cmdline())
    except psutil.Error:  # exited meanwhile
        return ""


def test_demo_simulator_dies_with_a_killed_app(tmp_path):
    """SIGKILL the app: PR_SET_PDEATHSIG makes the kernel stop its simulator child."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", BROWSER="true", TENANT_EVENTS_HOME=str(tmp_path))
    app = subprocess.Popen(
        [sys.executable, "-m", "tenant_events", "--demo", "--data-dir", str(tmp_path)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + bound(60)
        child = None
        while child is None:
            kids = [p for p in psutil.Process(app.pid).children() if "simulator" in _cmdline(p)]
            child = kids[0] if kids else None
            assert time.monotonic() < deadline and app.poll() is None, "the demo simulator never started"
            time.sleep(0.1)  # polling another process (no Qt loop in this test)
        os.kill(app.pid, signal.SIGKILL)
        app.wait(10)
        gone, alive = psutil.wait_procs([child], timeout=15)
        assert child in gone and not alive, "the simulator outlived the killed app"
    finally:
        if app.poll() is None:
            app.kill()
