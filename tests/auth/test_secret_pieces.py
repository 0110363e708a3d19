"""A long secret in pieces (auth/secret_pieces.py) through the keyring library's own backend interface: a write
that stops part-way leaves the old value whole, and a reader in another process never gets pieces of two values
joined. The keyring here is a backend of this test's own that can fail at a chosen write; the real keyring's
pieces are tested in test_secret_store.py."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import keyring
import pytest
from keyring.backend import KeyringBackend
from keyring.errors import PasswordSetError

from tenant_events.auth import secret_pieces
from tenant_events.auth.secret_store import KeyringSecretStore, SecretStoreUnavailable

OLD, NEW = "o" * 2500 + "1", "n" * 2500 + "2"  # three pieces each


class Shared(KeyringBackend):
    """One keyring that several stores (processes) share; `fail_at`: the write (counted from 1) that fails."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.items: dict[tuple[str, str], str] = {}
        self.writes = 0
        self.fail_at: int | None = None
        self.lock = threading.Lock()

    def get_password(self, service: str, username: str) -> str | None:
        with self.lock:
            return self.items.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        with self.lock:
            self.writes += 1
            if self.writes == self.fail_at:
                raise PasswordSetError("the keyring went away")
            self.items[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        with self.lock:
            self.items.pop((service, username), None)


@pytest.fixture
def shared() -> Iterator[Shared]:
    previous = keyring.get_keyring()
    backend = Shared()
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        keyring.set_keyring(previous)


@pytest.mark.parametrize("fail_at", [1, 2, 3, 4])  # each piece, then the marker
def test_a_write_that_stops_part_way_leaves_the_old_value_whole(shared, fail_at):
    store = KeyringSecretStore()
    store.set("acme", OLD)
    shared.writes, shared.fail_at = 0, fail_at
    with pytest.raises(SecretStoreUnavailable, match="the keyring went away"):
        store.set("acme", NEW)
    assert store.get("acme") == OLD
    shared.fail_at = None
    store.set("acme", NEW)  # the next write goes through, and leaves no piece of either behind
    assert store.get("acme") == NEW
    assert len(shared.items) == 1 + 3
    store.set("acme", "short")
    assert store.get("acme") == "short" and len(shared.items) == 1
    store.delete("acme")
    assert shared.items == {}


def test_a_reader_never_gets_pieces_of_two_values(shared):
    writer, reader = KeyringSecretStore(), KeyringSecretStore()  # two processes: a lock each
    writer.set("acme", OLD)
    stop, seen = threading.Event(), set()

    def rotate() -> None:
        while not stop.is_set():
            for value in (NEW, OLD):
                writer.set("acme", value)

    thread = threading.Thread(target=rotate)
    thread.start()
    try:
        for _ in range(3000):
            seen.add(reader.get("acme"))
    finally:
        stop.set()
        thread.join()
    assert seen <= {OLD, NEW}, f"read {len(seen - {OLD, NEW})} other values"


def test_markers_of_both_sets_and_of_an_older_version():
    assert secret_pieces.marker_of("chunked:3") == secret_pieces.Marker(3, "")
    assert secret_pieces.marker_of("chunked:3:b") == secret_pieces.Marker(3, "b")
    assert secret_pieces.marker_of("chunked:999") == secret_pieces.Marker(999, "")  # an older version's
    for value in ("chunked:0", "chunked:3:c", "chunked:3:", "chunked:x", "chunked:1000", "token"):
        assert secret_pieces.marker_of(value) is None, value


def test_a_reader_reads_again_when_two_writes_moved_the_marker_away_and_back():
    """Between a reader's pieces, one writer moved the marker to the other set and a second moved it back: the
    marker reads the same, one piece is gone (or new). The reader reads again, and gets the later value whole."""
    items = {"acme": "chunked:2", "acme#0": "o" * 1000, "acme#1": "o1"}
    writes = {"acme#1": 0}

    def get(key: str) -> str | None:
        value = items.get(key)
        if key == "acme#1" and writes["acme#1"] == 0:  # two rotations run while this piece is read
            writes["acme#1"] += 1
            items.update({"acme#0": "n" * 1000})  # the second write's first piece is in; its last is not yet
            items.pop("acme#1")
            value = None
            items["acme#1"] = "n2"  # …and now it is, with the marker as it was
        return value

    assert secret_pieces.read("acme", get) == "n" * 1000 + "n2"
