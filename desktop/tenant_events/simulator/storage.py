"""The simulator's SQLite file: event log rows, refresh-token families and small settings (
"State (signing key, event log, refresh-token families) persists in its data dir").

The signing key lives beside it as a PEM file (keys.py). With no data dir the simulator keeps everything in
memory and this module is not used for events.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY, type TEXT NOT NULL, time REAL NOT NULL,
                                   envelope BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS refresh_tokens (token_hash TEXT PRIMARY KEY, family TEXT NOT NULL,
                                           state TEXT NOT NULL, grant_json TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS refresh_tokens_family ON refresh_tokens (family);
"""


class SimStore:
    """One SQLite connection, used only from the server's event loop thread (and before it starts)."""

    def __init__(self, path: Path | None) -> None:
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.persistent = path is not None
        self.db = sqlite3.connect(str(path) if path else ":memory:", check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(SCHEMA)
        if path is not None:
            path.chmod(0o600)

    def close(self) -> None:
        self.db.close()

    # -- meta
    def get(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def put(self, key: str, value: str) -> None:
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    @contextlib.contextmanager
    def bulk(self) -> Iterator[None]:
        """Faster writes for a backlog: no fsync per batch (a crash loses only the backlog being made)."""
        self.db.execute("PRAGMA synchronous=OFF")
        try:
            yield
        finally:
            self.db.execute("PRAGMA synchronous=NORMAL")

    # -- events
    def append_events(self, rows: Iterable[tuple[int, str, float, bytes]]) -> None:
        with self.db:
            self.db.executemany("INSERT INTO events (seq, type, time, envelope) VALUES (?, ?, ?, ?)", rows)

    def iter_events(self) -> Iterator[tuple[int, str, float, bytes]]:
        yield from self.db.execute("SELECT seq, type, time, envelope FROM events ORDER BY seq")

    def delete_events_before(self, seq: int) -> None:
        with self.db:
            self.db.execute("DELETE FROM events WHERE seq < ?", (seq,))

    # -- refresh tokens
    def save_refresh(self, token_hash: str, family: str, state: str, grant_json: str) -> None:
        with self.db:
            self.db.execute(
                "INSERT OR REPLACE INTO refresh_tokens (token_hash, family, state, grant_json) VALUES (?,?,?,?)",
                (token_hash, family, state, grant_json),
            )

    def load_refresh(self, token_hash: str) -> tuple[str, str, str] | None:
        row = self.db.execute(
            "SELECT family, state, grant_json FROM refresh_tokens WHERE token_hash = ?", (token_hash,)
        ).fetchone()
        return None if row is None else (str(row[0]), str(row[1]), str(row[2]))

    def set_family_state(self, family: str, state: str) -> None:
        with self.db:
            self.db.execute("UPDATE refresh_tokens SET state = ? WHERE family = ?", (state, family))
