"""First run on a desktop whose keyring is locked, new or absent: the window shows at once, the UI keeps
running while the keyring's password prompt is open, and a lasting banner (in the window and the sign-in
prompt) says sign-ins last only while the app runs, with the reason.

Each case runs the real app in-process against a real private D-Bus session: gnome-keyring with a password
and its collection locked over D-Bus (org.freedesktop.Secret.Service.Lock), a fresh gnome-keyring with no
keyring yet (its first read asks for a new password through gcr-prompter, as a new desktop does), or a bus
with no Secret Service at all. The suite's own unlocked keyring is never touched.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest
from PySide6.QtCore import QTimer

from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, running_app, save_screenshot, until
from helpers.slack import bound

pytestmark = [pytest.mark.gui, pytest.mark.dbus, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]

WAIT = 8.0  # the app's keyring wait in these tests: a window held by the keyring would come after this
NO_ACTIVATION = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>session</type><listen>unix:tmpdir=/tmp</listen><auth>EXTERNAL</auth>
<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/>
<allow own="*"/></policy></busconfig>
"""


def _gdbus(address: str, *args: str) -> str:
    out = subprocess.run(
        ["gdbus", "call", "--address", address, *args], capture_output=True, text=True, timeout=20
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def _owned(address: str, name: str) -> bool:
    return "true" in _gdbus(
        address,
        "--dest",
        "org.freedesktop.DBus",
        "--object-path",
        "/org/freedesktop/DBus",
        "--method",
        "org.freedesktop.DBus.NameHasOwner",
        name,
    )


@pytest.fixture
def private_keyring(tmp_path: Path) -> Iterator[object]:
    """`make(kind)` → the address of a new session bus whose keyring is 'locked', 'new' or 'absent'."""
    for tool in ("dbus-daemon", "gnome-keyring-daemon", "gdbus"):
        if shutil.which(tool) is None:
            pytest.skip(f"needs {tool} (run under ./run test)")
    procs: list[subprocess.Popen[str]] = []

    def make(kind: str) -> str:
        env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "share"), "HOME": str(tmp_path)}
        # Not the worker's keyring, from the bus on: a keyring daemon started on this bus finds the daemon to hand
        # its work to (a new keyring, with a password prompt) through GNOME_KEYRING_CONTROL or XDG_RUNTIME_DIR,
        # and the worker's would then wait on that prompt for every later test. Its own runtime dir, and no other.
        env.pop("SSH_AUTH_SOCK", None)
        (tmp_path / "run").mkdir(mode=0o700, exist_ok=True)
        env["XDG_RUNTIME_DIR"] = str(tmp_path / "run")
        env["GNOME_KEYRING_CONTROL"] = str(tmp_path / "run" / "keyring")
        (tmp_path / "share").mkdir(exist_ok=True)
        if kind == "absent":
            (tmp_path / "bus.conf").write_text(NO_ACTIVATION)
            cmd = ["dbus-daemon", "--nofork", "--print-address=1", f"--config-file={tmp_path / 'bus.conf'}"]
        else:
            cmd = ["dbus-daemon", "--session", "--nofork", "--print-address=1"]
        bus = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        procs.append(bus)
        assert bus.stdout is not None
        address = bus.stdout.readline().strip()
        assert address, "dbus-daemon printed no address"
        env["DBUS_SESSION_BUS_ADDRESS"] = address
        if kind in ("locked", "new"):
            unlock = ["--unlock"] if kind == "locked" else []  # a password from stdin makes the login keyring
            daemon = subprocess.Popen(
                ["gnome-keyring-daemon", "--foreground", *unlock, "--components=secrets"],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                text=True,
                env=env,
            )
            procs.insert(0, daemon)
            assert daemon.stdin is not None
            if kind == "locked":
                daemon.stdin.write("a-keyring-password")
            daemon.stdin.close()
            deadline = time.monotonic() + bound(20)
            while not _owned(address, "org.freedesktop.secrets"):
                assert time.monotonic() < deadline, "gnome-keyring did not come up on the private bus"
                time.sleep(0.05)  # fixture set-up outside Qt: waiting for an external daemon
        if kind == "locked":
            _gdbus(
                address,
                "--dest",
                "org.freedesktop.secrets",
                "--object-path",
                "/org/freedesktop/secrets",
                "--method",
                "org.freedesktop.Secret.Service.Lock",
                "['/org/freedesktop/secrets/aliases/default']",
            )
            locked = _gdbus(
                address,
                "--dest",
                "org.freedesktop.secrets",
                "--object-path",
                "/org/freedesktop/secrets/aliases/default",
                "--method",
                "org.freedesktop.DBus.Properties.Get",
                "org.freedesktop.Secret.Collection",
                "Locked",
            )
            assert "true" in locked, locked
        return address

    yield make
    # What the bus started for us (gcr-prompter), then the keyring daemon, then the bus.
    started = [
        c for p in procs if psutil.pid_exists(p.pid) for c in psutil.Process(p.pid).children(recursive=True)
    ]
    for child in started:
        child.terminate()
    psutil.wait_procs(started, timeout=10)
    for proc in procs:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


@contextlib.contextmanager
def own_session_bus(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], None]]:
    """`use(address)` → the app in this process talks to that bus, and the keyring library picks its backend
    anew there, as a new app process would. On leaving, this worker's own pick comes back.

    The library picks once per process and keeps which backends were viable then: a pick made on a bus with no
    Secret Service would otherwise stay with this worker, and every later keyring test on it would find none."""
    import keyring
    from keyring import backend
    from keyring.backend import get_all_keyring

    before, limit = keyring.get_keyring(), backend._limit  # picked on this worker's own session bus

    def forget() -> None:
        if hasattr(get_all_keyring, "saved_result"):
            get_all_keyring.reset()

    def use(address: str) -> None:
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)  # the keyring library connects per call
        forget()
        # Only the library's own backends, as in an app process: every backend class defined in a process is
        # a candidate, the test doubles other tests on this worker define too (a pick among them chains them).
        keyring.core.init_backend(limit=lambda ring: type(ring).__module__.startswith("keyring.backends."))

    try:
        yield use
    finally:
        forget()
        backend._limit = limit
        keyring.set_keyring(before)


@pytest.fixture
def session_bus(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], None]]:
    with own_session_bus(monkeypatch) as use:
        yield use


REASONS = {
    "locked": f"the system keyring is locked (its password prompt was not answered within {WAIT:g} s)",
    "new": f"the system keyring has not been set up yet (its password prompt was not answered within {WAIT:g} s)",
    "absent": "no system keyring is available (no Secret Service on the session bus)",
}


@pytest.mark.expect_warning_logs
@pytest.mark.parametrize("kind", ["locked", "new", "absent"])
def test_window_shows_at_once_and_a_banner_says_why_sign_ins_are_not_kept(
    qloop, ui_paths, private_keyring, session_bus, kind
):
    session_bus(private_keyring(kind))
    # A profile from an earlier run: its stored sign-in is what the keyring would give back.
    ui_paths.settings_file.write_text(
        json.dumps(
            {
                "schema_version": 1,
                "tenants": [{"name": "acme", "domain": "127.0.0.1:9", "client_id": "tenant-events-demo"}],
            }
        )
    )

    async def scenario() -> None:
        started = time.monotonic()
        async with running_app(ui_paths, keyring_wait=WAIT) as app:
            assert app.window.isVisible()
            assert time.monotonic() - started < 4, "the window waited for the keyring"
            banners = app.window.banners
            if kind != "absent":  # while the prompt is open: said at once, and the UI keeps running
                await until(lambda: "keyring" in banners.text("keyring"), 4, "the waiting banner")
                assert ("is locked" if kind == "locked" else "has not been set up") in banners.text("keyring")
                save_screenshot(app.window, f"first-run-keyring-{kind}-waiting")
                ticks: list[float] = []
                timer = QTimer()
                timer.timeout.connect(lambda: ticks.append(time.monotonic()))
                timer.start(50)
                await until(lambda: len(ticks) >= 40, 10, "two seconds of UI timer ticks")
                timer.stop()
                gaps = [b - a for a, b in itertools.pairwise(ticks)]
                assert max(gaps) < 0.5, f"the UI thread stalled for {max(gaps):.2f} s"
            await until(
                lambda: "Sign-ins last only while" in banners.text("keyring"), WAIT + 10, "the banner"
            )
            text = banners.text("keyring")
            assert REASONS[kind] in text, text
            assert app.sign_in_prompt.banners.text("warning") == text
            assert not app.secrets.persistent
            await until(lambda: app.sessions["acme"].status.reason == "not signed in", 10, "the restore")
            save_screenshot(app.window, f"first-run-keyring-{kind}")
            if kind == "locked":  # the sign-in prompt says it too, above the address
                app.sign_in_prompt.show_url(
                    "acme", "http://127.0.0.1:9/authorize?client_id=tenant-events-demo"
                )
                save_screenshot(app.sign_in_prompt, "first-run-keyring-sign-in-prompt")
                app.sign_in_prompt.done_waiting()

    run_async(qloop, scenario())


@pytest.mark.dbus
@pytest.mark.skipif(
    os.environ.get("TENANT_EVENTS_REAL_KEYRING") != "1", reason="needs ./run test (gnome-keyring)"
)
@pytest.mark.expect_warning_logs
def test_a_run_on_a_bus_without_a_keyring_leaves_the_tests_after_it_their_keyring(private_keyring):
    """The worker's keyring pick comes back after a test on a private bus, even when that was its first pick."""
    from keyring.backend import get_all_keyring

    from tenant_events.auth.secret_store import open_secret_store

    if hasattr(get_all_keyring, "saved_result"):
        get_all_keyring.reset()  # as in a worker whose first keyring use is on the private bus
    with pytest.MonkeyPatch.context() as patch, own_session_bus(patch) as use:
        use(private_keyring("absent"))
        assert open_secret_store(probe_wait=WAIT).reason == REASONS["absent"]
    after = open_secret_store(probe_wait=WAIT)
    assert after.notice is None and after.store.persistent, after.notice
