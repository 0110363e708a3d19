"""logind's PrepareForSleep(false) after a resume nudges the engines: a fake login1 on a
private system bus (its own dbus-daemon) emits the signal; a child process runs the app's WakeWatcher on
that bus (Qt caches the system bus per process, so the watcher runs in a process that never saw another)."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from dbus_fast import BusType, Message, MessageType
from dbus_fast.aio import MessageBus

pytestmark = [
    pytest.mark.dbus,
    pytest.mark.skipif(shutil.which("dbus-daemon") is None, reason="needs dbus-daemon"),
]

BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
"""

WATCHER = textwrap.dedent(
    """
    import sys
    from PySide6.QtCore import QCoreApplication, QTimer
    from tenant_events.ui.app.wake_watcher import WakeWatcher

    app = QCoreApplication([])
    watcher = WakeWatcher(tick_ms=3_600_000)
    watcher.woke.connect(lambda reason: (print("woke:", reason, flush=True), app.quit()))
    watcher.start()
    print("watching", flush=True)
    QTimer.singleShot(30_000, app.quit)
    app.exec()
    """
)


async def emit_prepare_for_sleep(address: str, values: list[bool]) -> None:
    """Own org.freedesktop.login1 on the bus and emit PrepareForSleep(value) for each value."""
    bus = await MessageBus(bus_address=address, bus_type=BusType.SYSTEM).connect()
    try:
        await bus.request_name("org.freedesktop.login1")
        for value in values:
            await bus.send(
                Message(
                    message_type=MessageType.SIGNAL,
                    path="/org/freedesktop/login1",
                    interface="org.freedesktop.login1.Manager",
                    member="PrepareForSleep",
                    signature="b",
                    body=[value],
                )
            )
            await asyncio.sleep(0.2)
    finally:
        bus.disconnect()


def test_prepare_for_sleep_false_wakes_the_watcher(tmp_path: Path) -> None:
    socket = tmp_path / "system_bus"
    config = tmp_path / "system.conf"
    config.write_text(BUS_CONFIG.format(socket=socket))
    daemon = subprocess.Popen(
        ["dbus-daemon", f"--config-file={config}", "--nofork", "--print-address"],
        stdout=subprocess.PIPE,
        text=True,
    )
    child = None
    try:
        assert daemon.stdout is not None
        address = daemon.stdout.readline().strip()
        assert address.startswith("unix:"), address
        env = {**os.environ, "DBUS_SYSTEM_BUS_ADDRESS": address, "QT_QPA_PLATFORM": "offscreen"}
        child = subprocess.Popen([sys.executable, "-c", WATCHER], env=env, stdout=subprocess.PIPE, text=True)
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "watching"
        # going to sleep (true) must not wake anything; the resume (false) must
        asyncio.run(emit_prepare_for_sleep(address, [True, False]))
        out, _ = child.communicate(timeout=30)
        assert out.strip().splitlines() == ["woke: resumed from sleep"]
    finally:
        if child is not None and child.poll() is None:
            child.kill()
            child.wait()
        daemon.terminate()
        daemon.wait(10)
