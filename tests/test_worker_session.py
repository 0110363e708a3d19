"""Each pytest-xdist worker's desktop session (tests/helpers/worker_session.py) is its own: the keyring daemon a
process in the worker would find is the one answering on the worker's bus, never the suite's."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import psutil
import pytest

from helpers.worker_session import ask_bus_about_secret_service

pytestmark = [
    pytest.mark.dbus,
    pytest.mark.skipif(
        not os.environ.get("PYTEST_XDIST_WORKER") or os.environ.get("TENANT_EVENTS_TEST_SESSION") != "1",
        reason="a worker's own session exists only on a pytest-xdist worker under ./run test",
    ),
]


def test_a_fake_keyring_backend_a_test_defines_is_not_the_workers_backend():
    """The keyring library's backend is the worker's Secret Service, whichever test used the keyring first: a
    fake one defined in a test (a locked keyring, say) never joins a chain of backends picked after it."""
    import keyring
    from keyring.backend import KeyringBackend

    class Fake(KeyringBackend):
        priority = 1  # type: ignore[assignment]

        def get_password(self, service, username):
            return None

        def set_password(self, service, username, password):
            raise AssertionError("a test's fake")

        def delete_password(self, service, username):
            raise AssertionError("a test's fake")

    try:
        assert type(keyring.get_keyring()).__module__ == "keyring.backends.SecretService", (
            keyring.get_keyring()
        )
    finally:
        KeyringBackend._classes.discard(Fake)


def test_the_keyring_control_socket_a_worker_names_belongs_to_its_own_keyring():
    """A keyring daemon started on demand (`--start`, as D-Bus activation runs it) hands its work to the daemon
    GNOME_KEYRING_CONTROL or XDG_RUNTIME_DIR names: in a worker that is the one on the worker's own bus."""
    control = Path(os.environ["GNOME_KEYRING_CONTROL"]) / "control"
    assert Path(os.environ["XDG_RUNTIME_DIR"]) / "keyring" / "control" == control
    daemon = psutil.Process(int(ask_bus_about_secret_service("GetConnectionUnixProcessID")))
    assert "gnome-keyring-daemon" in " ".join(daemon.cmdline())
    listening = {c.laddr for c in daemon.net_connections(kind="unix")}
    assert str(control) in listening, (control, listening)
    assert "SSH_AUTH_SOCK" not in os.environ


@pytest.fixture(scope="module")
def module_state() -> str:
    return "made once for this module"


def test_tests_sharing_a_module_fixture_are_one_group_on_one_worker(request, module_state):
    """The suite's groups (a module's own fixture, the frozen bundle) reach pytest-xdist's scheduler: a grouped
    test's node id carries its group, which keeps the group's tests on one worker."""
    assert request.node.nodeid.endswith("@tests/test_worker_session.py"), request.node.nodeid


def test_a_keyring_the_workers_bus_starts_on_demand_is_unlocked(tmp_path, monkeypatch):
    """When the worker's keyring daemon died, the one its bus starts in its place answers at once (no unlock
    prompt that nobody would answer): a bus set up as the worker's, with no keyring daemon yet."""
    from helpers.slack import bound
    from helpers.worker_session import write_keyring_service_files
    from tenant_events.auth.secret_store import open_secret_store

    (tmp_path / "run").mkdir(mode=0o700)
    (tmp_path / "share").mkdir()
    write_keyring_service_files(tmp_path / "share", tmp_path / "keyring.log")
    env = {
        **os.environ,
        "XDG_RUNTIME_DIR": str(tmp_path / "run"),
        "XDG_DATA_HOME": str(tmp_path / "share"),
        "GNOME_KEYRING_CONTROL": str(tmp_path / "run" / "keyring"),
    }
    bus = subprocess.Popen(
        ["dbus-daemon", "--session", "--nofork", "--print-address=1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        assert bus.stdout is not None
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", bus.stdout.readline().strip())
        opened = open_secret_store(probe_wait=bound(20))
        assert opened.notice is None, opened.notice
        opened.store.set("acme", "kept")
        assert opened.store.get("acme") == "kept"
    finally:
        started = psutil.Process(bus.pid).children(recursive=True)
        for proc in [*started, psutil.Process(bus.pid)]:
            proc.terminate()
        psutil.wait_procs([*started, psutil.Process(bus.pid)], timeout=10)
        bus.wait(10)
        bus.stdout.close()
