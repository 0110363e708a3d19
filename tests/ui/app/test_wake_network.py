"""The network coming back nudges the engines (a default route appears): the app's WakeWatcher runs in a child
in its own network namespace (only `lo`: offline), which then gets a link with a default route."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(
    shutil.which("unshare") is None or shutil.which("ip") is None, reason="needs unshare and ip"
)

CHILD = textwrap.dedent(
    """
    import subprocess
    from PySide6.QtCore import QCoreApplication, QTimer
    from tenant_events.ui.app.wake_watcher import WakeWatcher

    app = QCoreApplication([])
    watcher = WakeWatcher(tick_ms=3_600_000)
    watcher.woke.connect(lambda reason: (print("woke:", reason, flush=True), app.quit()))
    watcher.start()
    print("start:", "netlink" if watcher._routes else None, "Online" if watcher._online else "Disconnected", flush=True)

    def link_up() -> None:
        for cmd in ("ip link add v0 type veth peer name v1", "ip link set v0 up", "ip link set v1 up",
                    "ip route add default dev v0"):
            subprocess.run(cmd.split(), check=True)

    QTimer.singleShot(500, link_up)
    QTimer.singleShot(20_000, app.quit)
    app.exec()
    """
)


def test_network_back_wakes_the_watcher() -> None:
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot make a network namespace here: {probe.stderr.decode().strip()}")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        ["unshare", "-n", sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=60
    )
    lines = done.stdout.strip().splitlines()
    assert lines and lines[0].startswith("start:"), (done.stdout, done.stderr)
    if lines[0].split()[1] == "None":
        pytest.skip("no netlink route subscription on this machine")
    assert lines[0].endswith("Disconnected"), lines  # only lo: offline
    assert lines[1:] == ["woke: network is back"], (done.stdout, done.stderr)
