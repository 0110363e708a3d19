"""The secret store: the real Secret Service over D-Bus (gnome-keyring, unlocked by tests/harness/session.sh)
and the no-keyring path (a subprocess with no session bus).

Under `./run test` TENANT_EVENTS_REAL_KEYRING=1 is set, and then a keyring that does not work FAILS the test;
outside that session the real-keyring tests skip with the reason.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import uuid

import pytest

from tenant_events.auth.secret_store import (
    KeyringSecretStore,
    MemorySecretStore,
    SecretStoreUnavailable,
    open_secret_store,
)

REAL = os.environ.get("TENANT_EVENTS_REAL_KEYRING") == "1"


@pytest.fixture
def real_store():
    if not REAL:
        pytest.skip(
            "TENANT_EVENTS_REAL_KEYRING is not set: run via ./run test tests/auth (gnome-keyring on D-Bus)"
        )
    opened = open_secret_store()
    assert opened.notice is None, f"the session's keyring must work here: {opened.notice}"
    assert isinstance(opened.store, KeyringSecretStore) and opened.store.persistent
    return opened.store


def _secret_tool_lookup(account: str) -> str | None:
    tool = shutil.which("secret-tool")
    if tool is None:
        return None
    out = subprocess.run(
        [tool, "lookup", "service", "tenant-events", "username", account],
        capture_output=True,
        text=True,
        timeout=20,
    )
    return out.stdout if out.returncode == 0 else ""


@pytest.mark.dbus
def test_real_keyring_round_trip_is_visible_to_the_secret_service(real_store):
    tenant = f"test-{uuid.uuid4().hex[:8]}"
    secret = "rt-" + uuid.uuid4().hex
    try:
        assert real_store.get(tenant) is None
        real_store.set(tenant, secret)
        assert real_store.get(tenant) == secret
        # Another process (libsecret's CLI) sees the same item: it really is in the Secret Service.
        seen = _secret_tool_lookup(f"refresh-token:{tenant}")
        if seen is not None:
            assert seen == secret
        real_store.set(tenant, secret + "-rotated")
        assert real_store.get(tenant) == secret + "-rotated"
    finally:
        real_store.delete(tenant)
    assert real_store.get(tenant) is None
    real_store.delete(tenant)  # deleting what is gone is fine


@pytest.mark.dbus
def test_real_keyring_chunks_long_values(real_store):
    """Windows caps a credential at 2560 bytes (keyring#355): long values are split; here they round-trip."""
    tenant = f"test-{uuid.uuid4().hex[:8]}"
    secret = "x" * 2500 + uuid.uuid4().hex
    try:
        real_store.set(tenant, secret)
        assert real_store.get(tenant) == secret
    finally:
        real_store.delete(tenant)
    assert real_store.get(tenant) is None
    assert _secret_tool_lookup(f"refresh-token:{tenant}#0") in (None, "")


def test_no_session_bus_means_session_only_with_a_notice(tmp_path):
    env = {
        k: v for k, v in os.environ.items() if k not in ("DBUS_SESSION_BUS_ADDRESS", "PYTHON_KEYRING_BACKEND")
    }
    env["XDG_CONFIG_HOME"] = str(tmp_path)  # no keyringrc.cfg choosing a backend
    env["HOME"] = str(tmp_path)
    code = (
        "import json; from tenant_events.auth.secret_store import open_secret_store\n"
        "o = open_secret_store(); o.store.set('t', 'secret-value')\n"
        "print(json.dumps({'persistent': o.store.persistent, 'notice': o.notice, 'kind': type(o.store).__name__}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result == {
        "persistent": False,
        "kind": "MemorySecretStore",
        "notice": result["notice"],
    }
    assert "Sign-in will last only while the app runs" in result["notice"]
    assert "no system keyring is available" in result["notice"]
    # never plaintext: nothing written anywhere under the fake home
    assert not [p for p in tmp_path.rglob("*") if p.is_file()]


def test_plaintext_backend_is_refused(tmp_path):
    """A keyring configured to a file backend is not used (never plaintext)."""
    code = (
        "import keyring, json\n"
        "from keyring.backend import KeyringBackend\n"
        "class PlainFile(KeyringBackend):\n"
        "    priority = 1\n"
        "    def get_password(self, s, u): return None\n"
        "    def set_password(self, s, u, p): open('leak.txt', 'w').write(p)\n"
        "    def delete_password(self, s, u): pass\n"
        "PlainFile.__module__ = 'keyrings.alt.file'\n"
        "keyring.set_keyring(PlainFile())\n"
        "from tenant_events.auth.secret_store import open_secret_store\n"
        "o = open_secret_store(); o.store.set('t', 'secret-value')\n"
        "print(json.dumps({'persistent': o.store.persistent, 'notice': o.notice}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["persistent"] is False
    assert "stores secrets in a plain file" in result["notice"]
    assert not (tmp_path / "leak.txt").exists()


def test_failing_keyring_write_raises_secret_store_unavailable():
    import keyring
    from keyring.backend import KeyringBackend
    from keyring.errors import KeyringLocked

    class Locked(KeyringBackend):
        priority = 1  # type: ignore[assignment]

        def get_password(self, service, username):
            return None  # a locked SecretService collection reads as empty (keyring#69)

        def set_password(self, service, username, password):
            raise KeyringLocked("Cannot create an item in a locked collection")

        def delete_password(self, service, username):
            raise KeyringLocked("locked")

    previous = keyring.get_keyring()
    keyring.set_keyring(Locked())
    try:
        store = KeyringSecretStore()
        with pytest.raises(
            SecretStoreUnavailable, match="refused to save the sign-in: Cannot create an item in a locked"
        ):
            store.set("t", "v")
    finally:
        keyring.set_keyring(previous)


def test_a_keyring_error_names_what_the_slot_holds():
    """A relay says why a destination's alerts wait: the keyring's refusal names the destination's URL, not a
    sign-in (the same store keeps refresh tokens, hub credentials and destination URLs)."""
    import keyring
    from keyring.backend import KeyringBackend
    from keyring.errors import KeyringLocked

    class Locked(KeyringBackend):
        priority = 1  # type: ignore[assignment]

        def get_password(self, service, username):
            raise KeyringLocked("Failed to unlock the collection!")

        def set_password(self, service, username, password):
            raise KeyringLocked("Failed to unlock the collection!")

        def delete_password(self, service, username):
            raise KeyringLocked("Failed to unlock the collection!")

    previous = keyring.get_keyring()
    keyring.set_keyring(Locked())
    try:
        store = KeyringSecretStore()
        for slot, held in (
            ("destination:ops@0123", "the destination's URL"),
            ("hub:team@0123", "the hub's credentials"),
            ("acme", "the sign-in"),
        ):
            with pytest.raises(SecretStoreUnavailable) as refused:
                store.get(slot)
            assert (
                str(refused.value)
                == f"the system keyring refused to read {held}: Failed to unlock the collection!"
            )
    finally:
        keyring.set_keyring(previous)


def test_memory_store_is_the_unit_test_fake():
    store = MemorySecretStore()
    store.set("a", "1")
    assert store.get("a") == "1" and not store.persistent
    store.delete("a")
    store.delete("a")
    assert store.get("a") is None
    assert "1" not in repr(store)


@pytest.mark.expect_warning_logs
def test_a_keyring_that_never_answers_falls_back_to_session_only():
    """An unlock prompt nobody answers must not hang sign-in (secretstorage#33)."""
    import threading

    import keyring
    from keyring.backend import KeyringBackend

    release = threading.Event()

    class Hanging(KeyringBackend):
        priority = 1  # type: ignore[assignment]

        def get_password(self, service, username):
            release.wait(30)
            return None

        def set_password(self, service, username, password):
            raise AssertionError("must not be used")

        def delete_password(self, service, username):
            pass

    previous = keyring.get_keyring()
    keyring.set_keyring(Hanging())
    try:
        opened = open_secret_store(probe_wait=0.3)
    finally:
        release.set()
        keyring.set_keyring(previous)
    assert not opened.store.persistent
    assert "did not answer within 0.3 s" in opened.notice


def _pieces(tenant: str) -> list[str]:
    """Every piece of `tenant`'s slot the Secret Service still holds (searched for straight in it, over one
    D-Bus connection: a connection per look-up is what makes gnome-keyring abort)."""
    import secretstorage

    with contextlib.closing(secretstorage.dbus_init()) as bus:
        collection = secretstorage.get_default_collection(bus)
        return [
            f"#{which}{i}"
            for which in ("", "b")  # the two sets a value's pieces alternate between (auth/secret_pieces.py)
            for i in range(70)
            if list(
                collection.search_items(
                    {"service": "tenant-events", "username": f"refresh-token:{tenant}#{which}{i}"}
                )
            )
        ]


def _written_by_an_older_version(items: dict[str, str]) -> None:
    """Items as the keyring library writes them (its attributes and label), over one D-Bus connection."""
    import secretstorage

    with contextlib.closing(secretstorage.dbus_init()) as bus:
        collection = secretstorage.get_default_collection(bus)
        for username, secret in items.items():
            attributes = {
                "username": username,
                "service": "tenant-events",
                "application": "Python keyring library",
            }
            label = f"Password for '{username}' on 'tenant-events'"
            collection.create_item(label, attributes, secret.encode(), replace=True)


@pytest.mark.dbus
def test_a_long_value_replaced_by_a_short_one_leaves_no_piece_behind(real_store):
    tenant = f"test-{uuid.uuid4().hex[:8]}"
    try:
        real_store.set(tenant, "L" * 2500)  # three pieces of 1000 characters
        assert _pieces(tenant) == ["#0", "#1", "#2"]
        real_store.set(tenant, "short-token")
        assert real_store.get(tenant) == "short-token"
        assert _pieces(tenant) == []
        real_store.set(tenant, "M" * 3500)
        real_store.set(tenant, "N" * 1500)  # four pieces, then two in the other set: the four go
        assert real_store.get(tenant) == "N" * 1500
        assert _pieces(tenant) == ["#b0", "#b1"]
    finally:
        real_store.delete(tenant)
    assert real_store.get(tenant) is None and _pieces(tenant) == []


@pytest.mark.dbus
@pytest.mark.parametrize("secret", ["chunked:3", "chunked:", "chunked:abc", "chunked:70", "chunked:1x"])
def test_a_value_that_starts_with_the_split_marker_round_trips(real_store, secret):
    tenant = f"test-{uuid.uuid4().hex[:8]}"
    try:
        real_store.set(tenant, secret)
        assert real_store.get(tenant) == secret
        real_store.set(tenant, secret + "x" * 1200)
        assert real_store.get(tenant) == secret + "x" * 1200
    finally:
        real_store.delete(tenant)
    assert real_store.get(tenant) is None and _pieces(tenant) == []


@pytest.mark.dbus
def test_delete_removes_stray_pieces_an_older_version_left(real_store):
    """Before the fix, a long token replaced by a short one left its pieces: deleting clears them too."""
    tenant = f"test-{uuid.uuid4().hex[:8]}"
    pieces = {f"refresh-token:{tenant}#{i}": f"old-piece-{i}" for i in range(3)}
    _written_by_an_older_version(pieces | {f"refresh-token:{tenant}": "short-token"})
    assert real_store.get(tenant) == "short-token"
    real_store.delete(tenant)
    assert real_store.get(tenant) is None and _pieces(tenant) == []


@pytest.mark.dbus
def test_a_secret_longer_than_the_slots_keep_is_refused_and_nothing_is_written(real_store):
    from tenant_events.auth.secret_store import MAX_SECRET, SecretTooLong

    tenant = f"test-{uuid.uuid4().hex[:8]}"
    real_store.set(tenant, "kept")
    with pytest.raises(SecretTooLong, match="is 64,001 characters; the keyring keeps at most 64,000"):
        real_store.set(tenant, "x" * (MAX_SECRET + 1))
    try:
        assert real_store.get(tenant) == "kept" and _pieces(tenant) == []
        real_store.set(tenant, "y" * MAX_SECRET)  # the longest kept: read back whole
        assert real_store.get(tenant) == "y" * MAX_SECRET
    finally:
        real_store.delete(tenant)
    assert real_store.get(tenant) is None and _pieces(tenant) == []


@pytest.mark.dbus
def test_an_oversized_value_an_older_version_left_is_read_whole_and_removed_whole(real_store):
    """Older versions wrote 70 pieces and the marker for a 70,000-character value, then could neither read it
    back (they returned the marker) nor remove the pieces past the 64th."""
    tenant = f"test-{uuid.uuid4().hex[:8]}"
    pieces = {f"refresh-token:{tenant}#{i}": f"{i:03d}" * 333 + "z" for i in range(70)}
    _written_by_an_older_version(pieces | {f"refresh-token:{tenant}": "chunked:70"})
    value = real_store.get(tenant)
    assert value is not None and len(value) == 70_000 and value.startswith("000000")
    real_store.delete(tenant)
    assert real_store.get(tenant) is None and _pieces(tenant) == []
