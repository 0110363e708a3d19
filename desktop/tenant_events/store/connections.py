"""Every connection this process holds to each database file, so the store can let go of a file as a whole.

SQLite gives all the connections of one process to one file a single wal-index (the `-shm`, mapped once). When
another program removes the `-wal` and `-shm` under a running writer, the writer must open the database again;
but a connection opened while an old one is still open would take up the old, removed index over the new files
(reads past the log's end: "disk I/O error", or worse). So the writer opens again only once every connection of
the process to the file is closed (`let_go_of`): `schema.connect` counts them here, and the long-lived holders
(the readers, the inbox, the outbox) keep theirs in a `HeldConnection`, which closes when asked — between two of
its holder's queries, under the holder's lock — and opens again at its next use, once the writer has reopened.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Final

from tenant_events.errors import StorageError

LET_GO_WAIT_S: Final = (
    10.0  # how long the writer waits for short-lived connections (a triage action) to close
)

_guard = threading.Condition()
_open: dict[str, weakref.WeakSet[TrackedConnection]] = {}
_holders: dict[str, weakref.WeakSet[HeldConnection]] = {}
_reopening: dict[str, int] = {}  # file → the thread opening it again
_watched: dict[
    str, Callable[[], str | None]
] = {}  # file → the writer's look at its files (checkpoint.FilesHeld)


def _key(path: Path | str) -> str:
    return os.path.realpath(path)


class TrackedConnection(sqlite3.Connection):
    """A connection that leaves the count of its file's connections when closed (or collected)."""

    tracked_key = ""

    def close(self) -> None:
        super().close()
        with _guard:
            found = _open.get(self.tracked_key)
            if found is not None:
                found.discard(self)
            _guard.notify_all()


def wait_while_reopened(path: Path) -> None:
    """Before a new connection: while the writer opens `path` again, only its own thread may connect."""
    key = _key(path)
    with _guard:
        _guard.wait_for(
            lambda: _reopening.get(key, threading.get_ident()) == threading.get_ident(),
            timeout=LET_GO_WAIT_S * 3,
        )


def watch(path: Path, gone: Callable[[], str | None] | None) -> None:
    """The writer of `path` names (or, with None, withdraws) its look at whether the file's -wal or -shm was
    removed: until it has opened the file again, a new connection would take up the removed wal-index."""
    with _guard:
        if gone is None:
            _watched.pop(_key(path), None)
        else:
            _watched[_key(path)] = gone


def refuse_if_gone(path: Path) -> None:
    """StorageError, in words, while the file's -wal or -shm is removed under this process's writer."""
    with _guard:
        look = _watched.get(_key(path))
    name = look() if look is not None else None
    if name is not None:
        raise StorageError(
            f"{name} was removed or replaced by another program while the event database {path} was open",
            "Tenant Events opens the database again by itself: try again in a moment",
        )


def track(conn: sqlite3.Connection, path: Path) -> None:
    """Count `conn` (made with `factory=TrackedConnection`) among `path`'s connections."""
    if isinstance(conn, TrackedConnection):
        conn.tracked_key = _key(path)
        with _guard:
            _open.setdefault(conn.tracked_key, weakref.WeakSet()).add(conn)


def open_count(path: Path) -> int:
    with _guard:
        return len(_open.get(_key(path), ()))


class HeldConnection:
    """A holder's connection (and the lock its queries take) that the writer may close between two queries."""

    def __init__(self, path: Path, opener: Callable[[], sqlite3.Connection]) -> None:
        self.path = path
        self.lock = threading.RLock()
        self._opener = opener
        self._conn: sqlite3.Connection | None = opener()
        self._closed = False
        with _guard:
            _holders.setdefault(_key(path), weakref.WeakSet()).add(self)

    @classmethod
    def fixed(cls, conn: sqlite3.Connection, path: Path) -> HeldConnection:
        """Someone else's connection, used as it is (never closed nor reopened here)."""
        held = cls.__new__(cls)
        held.path, held.lock, held._opener, held._conn, held._closed = (
            path,
            threading.RLock(),
            lambda: conn,
            conn,
            True,
        )
        return held

    @property
    def conn(self) -> sqlite3.Connection:
        """The connection, opened again first if the writer had it closed (call with `lock` held)."""
        conn = self._conn
        while conn is None:
            if self._closed:
                raise StorageError(f"the event database {self.path.name} is closed")
            made = self._opener()  # (connect() waits while the writer opens the file again)
            with _guard:
                # The writer may have begun opening the file again while this one was made: its let_go_of() found
                # no connection here to close, and would wait in all_closed() for this one, which would take up
                # the removed wal-index. Closed at once, and made again once the writer is done.
                if _reopening.get(_key(self.path), threading.get_ident()) == threading.get_ident():
                    self._conn = conn = made
                    continue
            made.close()
        return conn

    def let_go(self) -> None:
        if self._conn is None:  # let go already (its holder may be waiting, lock held, for the writer)
            return
        with self.lock:
            if self._conn is not None and not self._closed:
                conn, self._conn = self._conn, None
                conn.close()

    def close(self) -> None:
        with self.lock:
            if self._closed:
                return
            self.let_go()
            self._closed = True
        with _guard:
            found = _holders.get(_key(self.path))
            if found is not None:
                found.discard(self)


def let_go_of(path: Path) -> None:
    """Close the holders' connections to `path`; until `reopened(path)` no other thread opens a new one, and
    holders open theirs again after it. Call `all_closed` next, once the caller's own are closed too."""
    key = _key(path)
    with _guard:
        _reopening[key] = threading.get_ident()
        holders = list(_holders.get(key, ()))
    for held in holders:
        held.let_go()


def all_closed(path: Path) -> None:
    """Wait until no connection of this process to `path` is open; StorageError if a short-lived one (a triage
    action) stays open past LET_GO_WAIT_S."""
    key = _key(path)
    deadline = time.monotonic() + LET_GO_WAIT_S
    with _guard:
        while _open.get(key) and time.monotonic() < deadline:
            _guard.wait(0.1)
        left = len(_open.get(key, ()))
    if left:
        raise StorageError(
            f"cannot reopen the event database {path}: {left} other connection(s) of this process still use it",
            "it is tried again by itself",
        )


def reopened(path: Path) -> None:
    """The writer has the file open again (or gave up this round): holders may open theirs."""
    with _guard:
        _reopening.pop(_key(path), None)
        _guard.notify_all()


class HoldsConnection:
    """What a holder reads through: `_conn` (opened again when the writer had it closed) under `_lock`."""

    _held: HeldConnection

    @property
    def _conn(self) -> sqlite3.Connection:
        return self._held.conn

    @property
    def _lock(self) -> threading.RLock:
        return self._held.lock
