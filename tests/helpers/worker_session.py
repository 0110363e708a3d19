"""A desktop session of its own for each pytest-xdist worker: X display, session D-Bus and unlocked keyring.

`./run test` starts one Xvfb, one session bus and one gnome-keyring (tests/harness/session.sh). Workers running
side by side must not share them: one X display has one system-tray selection (trayer), one session bus has one
owner of org.freedesktop.Notifications (dunst), a root-window screenshot shows whatever another worker drew,
and one keyring holds one sign-in per profile name. So each worker starts the same three for itself before any
test (or Qt) reads DISPLAY and DBUS_SESSION_BUS_ADDRESS, and ends them when it exits.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path


def start_for_this_worker() -> None:
    """Inside `./run test` and an xdist worker: replace the shared session with this worker's own."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker or os.environ.get("TENANT_EVENTS_TEST_SESSION") != "1":
        return
    home = Path(tempfile.mkdtemp(prefix=f"tenant-events-{worker}-"))
    procs: list[subprocess.Popen[bytes]] = []

    def stop() -> None:
        for proc in reversed(procs):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(10)
        shutil.rmtree(home, ignore_errors=True)

    atexit.register(stop)
    env_before = dict(os.environ)
    try:
        os.environ["DISPLAY"] = _start_x(home, procs)
        os.environ["DBUS_SESSION_BUS_ADDRESS"] = _start_bus(home, procs)
        _start_keyring(home)
    except Exception:
        os.environ.clear()
        os.environ.update(env_before)
        raise


def _start_x(home: Path, procs: list[subprocess.Popen[bytes]]) -> str:
    """Xvfb on the first free display number (it writes the number it took to a pipe)."""
    read_end, write_end = os.pipe()
    proc = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_end), "-screen", "0", "1280x1024x24", "-nolisten", "tcp"],
        pass_fds=(write_end,),
        stdout=subprocess.DEVNULL,
        stderr=(home / "xvfb.log").open("wb"),
        start_new_session=True,
    )
    procs.append(proc)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        number = pipe.readline().strip()  # blocks until the server is ready (or gone: then empty)
    if not number:
        raise RuntimeError(f"Xvfb did not start: {(home / 'xvfb.log').read_text(errors='replace')[-2000:]}")
    os.environ.pop("XAUTHORITY", None)  # the shared display's cookie; this server takes local clients
    return f":{number.decode()}"


def _start_bus(home: Path, procs: list[subprocess.Popen[bytes]]) -> str:
    proc = subprocess.Popen(
        ["dbus-daemon", "--session", "--nofork", "--print-address=1"],
        stdout=subprocess.PIPE,
        stderr=(home / "dbus.log").open("wb"),
        start_new_session=True,
    )
    procs.append(proc)
    assert proc.stdout is not None
    address = proc.stdout.readline().decode().strip()
    if not address:
        raise RuntimeError(f"dbus-daemon did not start: {(home / 'dbus.log').read_text(errors='replace')}")
    return address


def _start_keyring(home: Path) -> None:
    """gnome-keyring on this worker's bus, unlocked, keeping its keyrings and sockets under `home`."""
    runtime = home / "run"
    runtime.mkdir(mode=0o700)
    os.environ["XDG_RUNTIME_DIR"] = str(runtime)
    os.environ["XDG_DATA_HOME"] = str(home / "share")
    (home / "share").mkdir()
    out = subprocess.run(
        ["gnome-keyring-daemon", "--unlock", "--components=secrets"],
        input=b"ci-keyring-password",
        capture_output=True,
        timeout=30,
        check=True,
    ).stdout.decode()
    for line in out.splitlines():
        name, _, value = line.partition("=")
        if name in ("GNOME_KEYRING_CONTROL", "SSH_AUTH_SOCK") and value:
            os.environ[name] = value
