"""`tenant-events --demo` as the user starts it (what `./run app` runs), in its own process: the demo simulator
child starts, the system browser ($BROWSER, here a script acting as the user) signs in, events are stored; a
second start hands over to the first; SIGTERM quits cleanly (exit 0) and leaves no child behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from helpers.slack import bound
from tenant_events.store import EventReader
from tenant_events.store.schema import SCHEMA_VERSION, connect

pytestmark = pytest.mark.gui
BROWSER = f"{sys.executable} {Path(__file__).with_name('browser_cmd.py')} %s"


def _schema_ready(db: Path) -> bool:
    """The app has migrated `db` all the way (each migration commits on its own, the version last): until then
    the file can exist with only some of its tables."""
    if not db.exists():
        return False
    conn = connect(db, readonly=True)  # as EventReader opens it
    try:
        return int(conn.execute("PRAGMA user_version").fetchone()[0]) >= SCHEMA_VERSION
    finally:
        conn.close()


def _cmdline(p: psutil.Process) -> str:
    try:
        return " ".join(p.cmdline())
    except psutil.Error:  # exited meanwhile
        return ""


def test_demo_command_end_to_end(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", BROWSER=BROWSER, TENANT_EVENTS_LOG_JSON="1")
    env.pop("TENANT_EVENTS_HOME", None)
    cmd = [sys.executable, "-m", "tenant_events", "--demo", "--data-dir", str(tmp_path)]
    app = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    db = tmp_path / "tenants" / "demo.sqlite3"
    try:
        deadline = time.monotonic() + bound(90)
        stored = 0
        while stored < 20:  # the demo simulator's live events, stored through the real sign-in
            assert app.poll() is None, f"the app exited early: {app.stderr.read()[-2000:]}"
            assert time.monotonic() < deadline, "no events stored within 90 s"
            if _schema_ready(db):
                with EventReader(db) as reader:
                    stored = reader.count()
            time.sleep(0.2)  # polling another process's database
        child = next(p for p in psutil.Process(app.pid).children() if "simulator" in _cmdline(p))
        # a second start on the same data dir hands over to the first and exits at once
        second = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
        assert second.returncode == 0
        assert app.poll() is None
        app.send_signal(signal.SIGTERM)
        assert app.wait(30) == 0, app.stderr.read()[-2000:]
        _gone, alive = psutil.wait_procs([child], timeout=15)
        assert not alive, "the demo simulator outlived the app"
        log = (tmp_path / "logs").glob("*")
        assert any(p.stat().st_size > 0 for p in log)
    finally:
        if app.poll() is None:
            app.kill()
            app.wait(30)  # reaped: a Popen collected with its child running warns in a later test's teardown
        if app.stderr is not None:
            app.stderr.close()
