"""The "last run died" notice: each instance's run marker is its own (a second start that hands over leaves the
running instance's marker alone); after SIGKILL the next start shows a banner in the window, with a link to
the dead run's redacted crash report when it wrote one.

The lifecycle runs `tenant-events gui` as real subprocesses (like tests/ui/app/test_gui_command.py); the banner
and its link are checked on the real app in-process, over a marker and a report a real process left behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import pytest

from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, running_app, save_screenshot
from helpers.slack import bound
from tenant_events.crash import RunMarker
from tenant_events.ui.app.single_instance import server_name

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


def _gui(data: Path, **popen: object) -> subprocess.Popen[str]:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", TENANT_EVENTS_LOG_JSON="1")
    env.pop("TENANT_EVENTS_HOME", None)
    cmd = [sys.executable, "-m", "tenant_events", "gui", "--data-dir", str(data)]
    return subprocess.Popen(cmd, env=env, text=True, **popen)  # type: ignore[call-overload, no-any-return]


def _wait_listening(app: subprocess.Popen[str], data: Path) -> Path:
    """Until the instance is the running one (its marker written, its single-instance socket up)."""
    marker = data / "running" / f"{app.pid}.json"
    socket = Path(tempfile.gettempdir()) / server_name(data)
    deadline = time.monotonic() + bound(60)
    while not (marker.exists() and socket.exists()):
        assert app.poll() is None, "the app exited during start"
        assert time.monotonic() < deadline, f"the app did not come up within {bound(60):.0f} s"
        time.sleep(0.1)  # polling another process's files
    return marker


def _read_until(app: subprocess.Popen[str], needle: str, limit_s: float = 60) -> dict[str, str]:
    """The first JSON log line on the app's stderr whose message holds `needle`."""
    assert app.stderr is not None
    timer = threading.Timer(limit_s, app.kill)  # a line that never comes ends the app, and so the loop
    timer.start()
    try:
        for line in app.stderr:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if needle in str(record.get("msg", "")):
                return record
    finally:
        timer.cancel()
    raise AssertionError(f"the app ended (or was ended after {limit_s} s) without logging {needle!r}")


def test_handover_keeps_the_marker_and_sigkill_is_told_at_the_next_start(tmp_path):
    data = tmp_path / "data"
    first = _gui(data, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        marker = _wait_listening(first, data)
        second = _gui(data, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, err = second.communicate(timeout=60)
        assert second.returncode == 0, err[-2000:]
        assert first.poll() is None
        assert marker.exists(), "the second start removed the running instance's marker"
        assert not (data / "running" / f"{second.pid}.json").exists()

        first.send_signal(signal.SIGKILL)
        first.wait(30)
        assert marker.exists()  # what a killed run leaves behind

        third = _gui(data, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            record = _read_until(third, "did not exit cleanly")
            assert record["logger"] == "tenant_events.ui.app.crash_notice" and str(first.pid) in record["msg"]
            assert not marker.exists(), "the dead run is told once"
            assert (data / "running" / f"{third.pid}.json").exists()
            third.send_signal(signal.SIGTERM)
            assert third.wait(30) == 0
            assert not list((data / "running").glob("*.json")), "a clean exit removes its own marker"
        finally:
            if third.poll() is None:
                third.kill()
    finally:
        if first.poll() is None:
            first.kill()


@pytest.mark.expect_warning_logs
def test_the_window_shows_the_notice_with_the_crash_report(qloop, ui_paths):
    # A real run that wrote a crash report (a token in its message) and then died without clean-up.
    script = textwrap.dedent(
        f"""
        import os, signal
        from pathlib import Path
        from tenant_events.crash import RunMarker, write_report
        RunMarker(Path({str(ui_paths.data_dir)!r}), Path({str(ui_paths.log_dir)!r})).__enter__()
        try:
            raise RuntimeError("refresh failed: Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhIn0.c2ln")
        except RuntimeError as exc:
            write_report(Path({str(ui_paths.log_dir)!r}), exc)
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    subprocess.run([sys.executable, "-c", script], timeout=60)
    with RunMarker(ui_paths.data_dir, ui_paths.log_dir) as marker:
        dead_runs = marker.dead_runs
    (dead,) = dead_runs
    assert dead.report is not None and "eyJ" not in dead.report.read_text()

    async def scenario() -> None:
        async with running_app(ui_paths, dead_runs=dead_runs, keyring_wait=5) as app:
            banner = app.window.banners.banners["crash"]
            assert banner.isVisible()
            text = banner.text
            assert "did not shut down cleanly" in text and "goes on from its last stored event" in text
            assert f'href="file://{dead.report}"' in text and "Open the crash report" in text
            save_screenshot(app.window, "crash-notice")
            app.window.banners.clear("crash")  # dismissed: gone for this run
            assert "crash" not in app.window.banners.banners

    run_async(qloop, scenario())
