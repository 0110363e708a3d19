"""With no notification daemon on the session bus, notifications fall back to the tray balloon, and clicking
the balloon runs the notification's click (for an alert: open it in the inbox). The daemon is absent for real: the
notifier's D-Bus client is pointed at a fresh private session bus on which nothing owns
org.freedesktop.Notifications."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtWidgets import QSystemTrayIcon

from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, signal_future
from tenant_events.ui.alerts import desktop_notifier
from tenant_events.ui.alerts.desktop_notifier import Notifier
from tenant_events.ui.look.icons import tray_icon
from tenant_events.view.tenant_status import TrayState

pytestmark = [
    pytest.mark.gui,
    pytest.mark.dbus,
    pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE),
    pytest.mark.skipif(shutil.which("dbus-daemon") is None, reason="needs dbus-daemon"),
]


# No <servicedir>: the stock session.conf would let the bus *activate* a notification daemon (dunst's .service)
BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/>
    <allow own="*"/></policy>
</busconfig>
"""


@pytest.fixture
def empty_session_bus(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    config = tmp_path / "session.conf"
    config.write_text(BUS_CONFIG.format(socket=tmp_path / "session_bus"))
    daemon = subprocess.Popen(
        ["dbus-daemon", f"--config-file={config}", "--nofork", "--print-address"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert daemon.stdout is not None
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", daemon.stdout.readline().strip())
    yield
    daemon.terminate()
    daemon.wait(10)


def test_no_daemon_falls_back_to_the_tray_balloon_and_its_click_opens_the_alert(qloop, empty_session_bus):
    icon = QSystemTrayIcon(tray_icon(TrayState.LIVE))
    icon.show()
    notifier = Notifier()
    notifier.attach_tray(icon)

    async def scenario() -> None:
        assert await notifier.probe() is False  # nothing answers org.freedesktop.Notifications on this bus
        opened: asyncio.Future[tuple[str, int]] = asyncio.get_running_loop().create_future()
        delivered = signal_future(notifier.delivered, wait_s=10)
        backend = await notifier.show(
            "User deleted",
            "someone@example.com deleted\nacme",
            "critical",
            lambda: opened.set_result(("acme", 7)),
        )
        assert backend == "tray"
        assert await delivered == ("User deleted", "tray")
        icon.messageClicked.emit()  # what the tray does when the user clicks the balloon
        assert await asyncio.wait_for(opened, 5) == ("acme", 7)  # the tenant and the alert to open

    try:
        run_async(qloop, scenario())
    finally:
        icon.hide()
        icon.deleteLater()


def test_a_daemon_that_answers_late_is_asked_again(qloop, empty_session_bus, monkeypatch):
    """On a busy machine the daemon may not answer the first question in time: that notification goes to the
    tray, and the daemon is asked again a while later instead of never for the rest of the session."""
    monkeypatch.setattr(desktop_notifier, "PROBE_WAIT_S", 0.5)
    monkeypatch.setattr(desktop_notifier, "PROBE_AGAIN_S", 0.0)
    daemon = subprocess.Popen(
        [sys.executable, str(Path(__file__).parents[2] / "helpers" / "slow_notify_daemon.py")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    notifier = Notifier()

    async def scenario() -> None:
        assert daemon.stdin is not None and daemon.stdout is not None
        assert await asyncio.to_thread(daemon.stdout.readline) == "ready\n"
        assert await notifier.probe() is False  # no answer in time
        daemon.stdin.write("answer now\n")  # the daemon answers from now on
        daemon.stdin.flush()
        assert await notifier.probe() is True

    try:
        run_async(qloop, scenario())
    finally:
        daemon.kill()
        daemon.wait(10)
