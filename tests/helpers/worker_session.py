"""A desktop session of its own for each pytest-xdist worker: X display, session D-Bus and unlocked keyring.

`./run test` starts one Xvfb, one session bus and one gnome-keyring (tests/harness/session.sh). Workers running
side by side must not share them: one X display has one system-tray selection (trayer), one session bus has one
owner of org.freedesktop.Notifications (dunst), a root-window screenshot shows whatever another worker drew,
and one keyring holds one sign-in per profile name. So each worker starts the same three for itself before any
test (or Qt) reads DISPLAY and DBUS_SESSION_BUS_ADDRESS, and ends them when it exits.

Nothing a worker starts may find the suite's keyring: the suite's GNOME_KEYRING_CONTROL is replaced by the
worker's own before its bus starts, so a keyring daemon the bus starts on demand (D-Bus activation runs
`gnome-keyring-daemon --start`, which hands its work to whichever daemon that variable or XDG_RUNTIME_DIR names
and never answers on the bus itself) reaches the worker's daemon, not the suite's.

gnome-keyring-daemon can die (it aborts when new D-Bus connections race its registration of them). The worker's
bus then starts another on demand, unlocked as the first was (the system's service file would start one with
the keyring locked, whose unlock prompt nobody answers: every later keyring call of the worker would wait on
it), and the test during which the first died fails, saying so (`keyring_death`).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from helpers.slack import bound

KEYRING_PASSWORD = "ci-keyring-password"
_keyring: list[subprocess.Popen[bytes]] = []  # the worker's keyring daemon, while it is known to be alive


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
        _own_keyring_dirs(home)
        write_keyring_service_files(home / "share", home / "keyring.log")
        os.environ["DISPLAY"] = _start_x(home, procs)
        os.environ["DBUS_SESSION_BUS_ADDRESS"] = _start_bus(home, procs)
        _start_keyring(home, procs)
        _pick_keyring_backend()
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
    os.environ["TENANT_EVENTS_TEST_XVFB_LOG"] = str(home / "xvfb.log")  # for a test's failure message
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


def _own_keyring_dirs(home: Path) -> None:
    """The worker's keyrings and keyring sockets under `home`, named in the environment its bus and every
    process it starts inherit; the suite's keyring sockets are named nowhere."""
    runtime = home / "run"
    runtime.mkdir(mode=0o700)
    (home / "share").mkdir()
    os.environ["XDG_RUNTIME_DIR"] = str(runtime)
    os.environ["XDG_DATA_HOME"] = str(home / "share")
    os.environ["GNOME_KEYRING_CONTROL"] = str(runtime / "keyring")  # where the worker's daemon listens
    os.environ.pop("SSH_AUTH_SOCK", None)


def write_keyring_service_files(data_home: Path, log: Path) -> None:
    """D-Bus activation of the Secret Service, for a bus whose XDG_DATA_HOME is `data_home` (its services there
    come before the system's): an unlocked keyring, logging to `log`."""
    services = data_home / "dbus-1" / "services"
    services.mkdir(parents=True, exist_ok=True)
    daemon = "gnome-keyring-daemon --foreground --unlock --components=secrets"
    command = f"printf %s {KEYRING_PASSWORD} | exec {daemon} 2>>{log}"
    for name in ("org.freedesktop.secrets", "org.gnome.keyring"):
        (services / f"{name}.service").write_text(
            f"[D-BUS Service]\nName={name}\nExec=/bin/sh -c '{command}'\n"
        )


def keyring_death() -> str | None:
    """Why the worker's keyring daemon is gone (its exit status and log) when it exited since the last call."""
    if not _keyring or _keyring[0].poll() is None:
        return None
    proc = _keyring.pop()
    log = Path(os.environ.get("TENANT_EVENTS_TEST_KEYRING_LOG", "/nonexistent"))
    text = log.read_text(errors="replace")[-3000:] if log.exists() else "(no log)"
    return (
        f"the worker's gnome-keyring-daemon (pid {proc.pid}) exited with status {proc.returncode} during this "
        f"test; the tests after it get an unlocked one started on demand. Its log ends:\n{text}"
    )


def _start_keyring(home: Path, procs: list[subprocess.Popen[bytes]]) -> None:
    """gnome-keyring on this worker's bus, unlocked; ready (it owns the Secret Service name) before any test."""
    proc = subprocess.Popen(
        ["gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=(home / "keyring.log").open("wb"),
        start_new_session=True,
    )
    procs.append(proc)
    assert proc.stdin is not None
    proc.stdin.write(KEYRING_PASSWORD.encode())
    proc.stdin.close()
    os.environ["TENANT_EVENTS_TEST_KEYRING_LOG"] = str(home / "keyring.log")  # for keyring_death's message
    deadline = time.monotonic() + bound(30)
    while not ask_bus_about_secret_service("NameHasOwner"):
        if proc.poll() is not None or time.monotonic() > deadline:
            log = (home / "keyring.log").read_text(errors="replace")[-2000:]
            raise RuntimeError(f"gnome-keyring did not take the Secret Service on the worker's bus: {log}")
        time.sleep(0.05)  # worker start-up, before any test: waiting for an external daemon
    _keyring.append(proc)


def _pick_keyring_backend() -> None:
    """The keyring library picks its backend once per process, among the backend classes defined by then. Here,
    before any test, that is the worker's Secret Service; picked later, a fake backend a test had defined (a
    locked or a hanging keyring) joined a chain of backends that every later test of the worker went through,
    at three D-Bus connections a call."""
    import keyring

    keyring.get_keyring()


def ask_bus_about_secret_service(method: str) -> Any:
    """One org.freedesktop.DBus call about the Secret Service's name on the session bus (`NameHasOwner`,
    `GetConnectionUnixProcessID`): asking the bus starts nothing on it."""
    from jeepney import DBusAddress, new_method_call
    from jeepney.io.blocking import open_dbus_connection

    bus = DBusAddress(
        "/org/freedesktop/DBus", bus_name="org.freedesktop.DBus", interface="org.freedesktop.DBus"
    )
    with open_dbus_connection(bus="SESSION") as conn:
        reply = conn.send_and_get_reply(
            new_method_call(bus, method, "s", ("org.freedesktop.secrets",)), timeout=10
        )
    return reply.body[0]
