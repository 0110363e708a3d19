"""The keyring store talks to the Secret Service over one D-Bus connection, and goes on after the keyring's
daemon went away and came back.

gnome-keyring-daemon aborts when short-lived D-Bus connections race its registration of each new one (the
keyring library opened one per call: a 64,000-character secret, 64 pieces, made about 200 of them), so how many
connections the store opens is counted here on the bus itself. The restart case runs a private bus (without
D-Bus activation: nothing starts a locked keyring in the killed one's place) and a private gnome-keyring.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.private_bus import start_private_bus
from helpers.slack import bound
from tenant_events.auth.secret_store import (
    MAX_SECRET,
    KeyringSecretStore,
    OpenedStore,
    SecretStoreUnavailable,
    open_secret_store,
)

REAL = os.environ.get("TENANT_EVENTS_REAL_KEYRING") == "1"
pytestmark = [
    pytest.mark.dbus,
    pytest.mark.skipif(not REAL, reason="needs ./run test (gnome-keyring on D-Bus)"),
]

NO_ACTIVATION = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>session</type><listen>unix:tmpdir=/tmp</listen><auth>EXTERNAL</auth>
<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/>
<allow own="*"/></policy></busconfig>
"""


def _new_connections_during(action: object) -> list[str]:
    """The unique names of every connection made to the session bus while `action()` ran."""
    from jeepney import MatchRule, message_bus
    from jeepney.io.blocking import open_dbus_connection

    rule = MatchRule(
        type="signal",
        sender="org.freedesktop.DBus",
        interface="org.freedesktop.DBus",
        member="NameOwnerChanged",
    )
    with open_dbus_connection(bus="SESSION") as bus:
        bus.send_and_get_reply(message_bus.AddMatch(rule), timeout=10)
        with bus.filter(rule, bufsize=100_000) as signals:
            action()  # type: ignore[operator]
            bus.send_and_get_reply(message_bus.GetId(), timeout=10)  # the bus sent what came before this
            names = []
            while signals:
                name, old, new = signals.popleft().body
                if name.startswith(":") and not old and new:
                    names.append(name)
    return names


def test_a_secret_in_64_pieces_is_written_read_and_removed_over_one_connection():
    opened = open_secret_store()
    assert opened.notice is None, opened.notice
    store = opened.store
    assert isinstance(store, KeyringSecretStore)
    tenant = f"test-{uuid.uuid4().hex[:8]}"
    secret = "z" * MAX_SECRET

    def write_read_remove() -> None:
        store.set(tenant, secret)
        assert store.get(tenant) == secret
        store.delete(tenant)
        assert store.get(tenant) is None

    try:
        made = _new_connections_during(write_read_remove)
    finally:
        store.delete(tenant)
    # one for the store (the probe's read already made it: none at all is fine), nothing per piece or per call
    assert len(made) <= 1, f"{len(made)} new D-Bus connections for one secret: {made[:5]}"


class PrivateKeyring:
    """A session bus without D-Bus activation and an unlocked gnome-keyring on it, keeping its keyrings in
    `home`; `kill()` and `start()` it again (the same keyring file, the same password)."""

    def __init__(self, home: Path) -> None:
        self.home = home
        (home / "run").mkdir(mode=0o700)
        (home / "share").mkdir()
        (home / "bus.conf").write_text(NO_ACTIVATION)
        self.env = {
            **os.environ,
            "HOME": str(home),
            "XDG_RUNTIME_DIR": str(home / "run"),
            "XDG_DATA_HOME": str(home / "share"),
            "GNOME_KEYRING_CONTROL": str(home / "run" / "keyring"),
        }
        self.env.pop("SSH_AUTH_SOCK", None)
        self.bus, self.address = start_private_bus(self.env, str(home / "bus.conf"))
        self.env["DBUS_SESSION_BUS_ADDRESS"] = self.address
        self.daemon: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.daemon = subprocess.Popen(
            ["gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=self.env,
        )
        assert self.daemon.stdin is not None
        self.daemon.stdin.write(b"a-keyring-password")
        self.daemon.stdin.close()
        deadline = time.monotonic() + bound(20)
        while not self._owned():
            assert self.daemon.poll() is None, "gnome-keyring exited on the private bus"
            assert time.monotonic() < deadline, "gnome-keyring did not come up on the private bus"
            time.sleep(0.05)  # waiting for an external daemon to take its name

    def _owned(self) -> bool:
        from jeepney import message_bus
        from jeepney.io.blocking import open_dbus_connection

        with open_dbus_connection(bus=self.address) as bus:
            reply = bus.send_and_get_reply(message_bus.NameHasOwner("org.freedesktop.secrets"), timeout=10)
        return bool(reply.body[0])

    def kill(self) -> None:
        assert self.daemon is not None
        self.daemon.send_signal(signal.SIGKILL)
        self.daemon.wait(10)
        deadline = time.monotonic() + bound(10)
        while self._owned():
            assert time.monotonic() < deadline, "the killed keyring still owns its name"
            time.sleep(0.05)  # the bus notices the dead connection

    def stop(self) -> None:
        for proc in (self.daemon, self.bus):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                proc.wait(10)
        if self.bus.stdout is not None:
            self.bus.stdout.close()


@pytest.fixture
def private_keyring(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PrivateKeyring]:
    for tool in ("dbus-daemon", "gnome-keyring-daemon"):
        if shutil.which(tool) is None:
            pytest.skip(f"needs {tool} (run under ./run test)")
    keyring = PrivateKeyring(tmp_path)
    try:
        keyring.start()
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", keyring.address)  # where the store connects
        yield keyring
    finally:
        keyring.stop()


def test_the_store_goes_on_after_its_keyring_daemon_was_killed_and_started_again(private_keyring):
    store = KeyringSecretStore()
    secret = "p" * 2500  # in three pieces
    store.set("acme", secret)
    assert store.get("acme") == secret

    private_keyring.kill()
    with pytest.raises(
        SecretStoreUnavailable, match="could not read the sign-in: no keyring daemon is on the s"
    ):
        store.get("acme")

    private_keyring.start()  # the same keyring file: what was saved is there
    assert store.get("acme") == secret
    store.set("acme", "short")
    assert store.get("acme") == "short"
    store.delete("acme")
    assert store.get("acme") is None


def test_a_keyring_that_is_not_there_is_said_to_be_missing_not_to_have_quit(tmp_path, monkeypatch):
    """secretstorage's one "not available" error covers several things: each is said as what happened (a bus
    without a keyring daemon, no session bus at all), not as a daemon that quit or restarted."""
    empty = PrivateKeyring(tmp_path)  # a session bus with no keyring daemon on it, and none to start
    try:
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", empty.address)
        with pytest.raises(SecretStoreUnavailable) as raised:
            KeyringSecretStore().get("acme")
        assert str(raised.value).startswith(
            "the system keyring could not read the sign-in: no keyring daemon is on the session bus (it quit, or "
            "none runs)"
        ), raised.value
    finally:
        empty.stop()
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS")
    with pytest.raises(SecretStoreUnavailable) as raised:
        KeyringSecretStore().get("acme")
    said = str(raised.value)
    assert said.startswith("the system keyring could not read the sign-in: there is no session bus"), said
    assert "quit" not in said


def test_a_look_again_at_a_locked_keyring_shows_no_unlock_prompt(private_keyring):
    """A command looking for the keyring again in the background (a destination waits for its URL) does not open
    a locked one: the first look showed its unlock prompt, and one every few seconds is not for a person."""
    import secretstorage

    with contextlib.closing(secretstorage.dbus_init()) as bus:
        secretstorage.get_default_collection(bus).lock()
    opened: list[OpenedStore] = []
    unlocks = _unlocks_asked_during(lambda: opened.append(open_secret_store(probe_wait=2.0, ask=False)))
    assert not opened[0].store.persistent and opened[0].reason == "the system keyring is locked"
    assert unlocks == 0


def _unlocks_asked_during(action: object) -> int:
    """How many times the keyring was asked to unlock (each shows its prompt) on the session bus meanwhile."""
    from jeepney import MatchRule, message_bus
    from jeepney.io.blocking import open_dbus_connection

    rule = MatchRule(
        type="method_call", interface="org.freedesktop.Secret.Service", member="Unlock", eavesdrop=True
    )
    with open_dbus_connection(bus="SESSION") as bus:
        bus.send_and_get_reply(message_bus.AddMatch(rule), timeout=10)
        with bus.filter(rule, bufsize=1000) as calls:
            action()  # type: ignore[operator]
            bus.send_and_get_reply(message_bus.GetId(), timeout=10)  # the bus sent what came before this
            return len(calls)
