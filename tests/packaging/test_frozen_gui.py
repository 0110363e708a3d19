"""The installed app's GUI, frozen: it starts on a real X display, shows its window, and a second launch
(a double-click while it runs) hands over to the first and exits 0."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from helpers.fixtures_ui import SCREENSHOTS
from helpers.frozen import frozen_env
from helpers.slack import bound

pytestmark = pytest.mark.skipif(
    not os.environ.get("DISPLAY"), reason="needs the X display ./run test provides"
)


class LogWatch:
    """Collects an app's JSON log lines from stderr and waits for one."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.lines: list[str] = []
        self._cv = threading.Condition()
        threading.Thread(target=self._read, args=(proc,), daemon=True).start()

    def _read(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            with self._cv:
                self.lines.append(line)
                self._cv.notify_all()

    def wait_for(self, prefix: str, timeout: float = 60) -> None:
        def seen() -> bool:
            for line in self.lines:
                try:
                    if json.loads(line).get("msg", "").startswith(prefix):
                        return True
                except ValueError:
                    continue
            return False

        with self._cv:
            if not self._cv.wait_for(seen, timeout):
                raise AssertionError(
                    f"no log line {prefix!r} within {timeout} s:\n{''.join(self.lines)[-3000:]}"
                )


def test_frozen_gui_shows_its_window_and_a_second_launch_hands_over(frozen_app: Path, tmp_path: Path):
    env = frozen_env(
        DISPLAY=os.environ["DISPLAY"],
        TENANT_EVENTS_LOG_JSON="1",
        DBUS_SESSION_BUS_ADDRESS=os.environ.get("DBUS_SESSION_BUS_ADDRESS", ""),
    )
    data = tmp_path / "data"
    first = subprocess.Popen(
        [str(frozen_app), "--data-dir", str(data)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    watch = LogWatch(first)
    try:
        # No tray host in this session, so the app runs as a normal window: the welcome window (no tenant yet)
        # must be mapped on the X display.
        deadline = time.monotonic() + bound(60)
        windows = ""
        while time.monotonic() < deadline and first.poll() is None:
            windows = subprocess.run(
                ["xdotool", "search", "--onlyvisible", "--name", "Tenant Events"],
                capture_output=True,
                text=True,
            ).stdout.strip()
            if windows:
                break
            time.sleep(0.2)
        assert windows, f"no visible Tenant Events window on the display:\n{''.join(watch.lines)[-3000:]}"
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        shot = SCREENSHOTS / "frozen-app-start.png"
        if shutil.which("import"):
            # Mapped is not yet painted: on a loaded machine the first paint can follow the map by a moment.
            painted_by = time.monotonic() + bound(30)
            while True:
                subprocess.run(["import", "-window", "root", str(shot)], check=True, timeout=30)
                colours = subprocess.run(
                    ["identify", "-format", "%k", str(shot)], capture_output=True, text=True
                )
                if int(colours.stdout or 0) > 16 or time.monotonic() > painted_by:
                    break
                time.sleep(0.3)
            assert int(colours.stdout or 0) > 16, "the screenshot is (nearly) one colour: nothing was drawn"

        second = subprocess.run(
            [str(frozen_app), "--data-dir", str(data)], env=env, capture_output=True, text=True, timeout=60
        )
        assert second.returncode == 0, second.stderr[-2000:]
        assert "already running" in second.stderr
        assert first.poll() is None, "the first instance must keep running"
    finally:
        first.send_signal(signal.SIGTERM)
        try:
            first.wait(timeout=30)
        except subprocess.TimeoutExpired:
            first.kill()
            first.wait()
    assert first.returncode == 0, "".join(watch.lines)[-3000:]
