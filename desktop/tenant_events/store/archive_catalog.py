"""The archive's catalog, kept in the tenant database itself: which archive files hold which events.

Tiers are cut by stored seq: the archive holds every event with seq <= `archived_upto`, the live `events` table
every event above it. Moving events (archive_move.py) writes their file first, then in ONE SQLite transaction
adds the file here, deletes the rows from `events` and raises `archived_upto`. A reader that reads the catalog
and the live rows inside one read transaction (`snapshot`) therefore sees each event exactly once, whatever the
mover does meanwhile; a file not (yet) in the catalog is never read.

A file leaves the catalog (compaction, archive retention) in one transaction too, and is only deleted from disk
later (`archive_garbage`, after GRACE_SECONDS), so a reader still working from an older snapshot finds it.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Protocol

GRACE_SECONDS: Final = 600.0

ARCHIVE_SQL: Final = """
CREATE TABLE IF NOT EXISTS archive_files (
    name       TEXT PRIMARY KEY,  -- in the archive folder; its tokens file is named after it
    month      TEXT NOT NULL,     -- YYYY-MM (UTC) of every event it holds
    first_seq  INTEGER NOT NULL,
    last_seq   INTEGER NOT NULL,
    first_ms   INTEGER NOT NULL,
    last_ms    INTEGER NOT NULL,
    rows       INTEGER NOT NULL,
    bytes      INTEGER NOT NULL,  -- both files
    fts_upto   INTEGER NOT NULL,  -- its events up to this seq may still sit in the live full-text index
    created_at REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS archive_garbage (name TEXT PRIMARY KEY, since REAL NOT NULL) WITHOUT ROWID;
INSERT OR IGNORE INTO counters (name, value) VALUES ('archived_upto', 0);
"""


@dataclass(frozen=True, slots=True)
class ArchiveFile:
    name: str
    month: str
    first_seq: int
    last_seq: int
    first_ms: int
    last_ms: int
    rows: int
    bytes: int
    fts_upto: int = 0


class TeamRows(Protocol):
    """The team archive's rows one read shows (team_view.py `TeamSlice`): listed as `file`, read by SQL."""

    @property
    def file(self) -> ArchiveFile: ...

    def events_sql(self) -> str: ...

    def tokens_sql(self) -> str: ...


@dataclass(frozen=True, slots=True)
class ArchiveSnapshot:
    """The archive as one read transaction saw it: events with seq <= `upto` are in `files`, the rest live.
    `team`: the team archive's rows the database is read with (team_view.py), also listed in `files`."""

    upto: int
    files: tuple[ArchiveFile, ...]
    team: TeamRows | None = None

    @property
    def rows(self) -> int:
        return sum(f.rows for f in self.files)

    def covering(self, low: int, high: int) -> tuple[ArchiveFile, ...]:
        """Files that may hold a seq in [low, high]."""
        return tuple(f for f in self.files if f.last_seq >= low and f.first_seq <= high)


EMPTY: Final = ArchiveSnapshot(0, ())
_COLUMNS: Final = "name, month, first_seq, last_seq, first_ms, last_ms, rows, bytes, fts_upto"


def has_catalog(conn: sqlite3.Connection) -> bool:
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'archive_files'"
    ).fetchone()
    return row is not None


def snapshot(conn: sqlite3.Connection) -> ArchiveSnapshot:
    """The catalog now; call inside the read transaction that also reads the live rows."""
    row = conn.execute("SELECT value FROM counters WHERE name = 'archived_upto'").fetchone()
    if row is None or not int(row[0]):
        return EMPTY
    files = conn.execute(f"SELECT {_COLUMNS} FROM archive_files ORDER BY last_seq DESC").fetchall()  # noqa: S608
    return ArchiveSnapshot(int(row[0]), tuple(ArchiveFile(*f) for f in files))


def add_files(conn: sqlite3.Connection, files: Iterable[ArchiveFile], upto: int | None) -> None:
    """Inside the caller's write transaction: list `files` and, when given, raise `archived_upto` to `upto`."""
    now = time.time()
    conn.executemany(
        f"INSERT INTO archive_files ({_COLUMNS}, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)",  # noqa: S608
        [
            (
                f.name,
                f.month,
                f.first_seq,
                f.last_seq,
                f.first_ms,
                f.last_ms,
                f.rows,
                f.bytes,
                f.fts_upto,
                now,
            )
            for f in files
        ],
    )
    if upto is not None:
        conn.execute(
            "UPDATE counters SET value = max(value, ?) WHERE name = 'archived_upto'",
            (upto,),
        )


def drop_files(conn: sqlite3.Connection, names: Iterable[str]) -> None:
    """Inside the caller's write transaction: take files out of the catalog; their deletion waits (garbage)."""
    now = time.time()
    for name in names:
        conn.execute("DELETE FROM archive_files WHERE name = ?", (name,))
        conn.execute("INSERT OR REPLACE INTO archive_garbage (name, since) VALUES (?, ?)", (name, now))


def cleared_fts(conn: sqlite3.Connection, name: str) -> None:
    conn.execute("UPDATE archive_files SET fts_upto = 0 WHERE name = ?", (name,))


def garbage_due(conn: sqlite3.Connection, now: float | None = None) -> list[str]:
    cutoff = (time.time() if now is None else now) - GRACE_SECONDS
    return [str(r[0]) for r in conn.execute("SELECT name FROM archive_garbage WHERE since <= ?", (cutoff,))]


def forget_garbage(conn: sqlite3.Connection, names: Iterable[str]) -> None:
    conn.executemany("DELETE FROM archive_garbage WHERE name = ?", [(n,) for n in names])


def known_names(conn: sqlite3.Connection) -> set[str]:
    """Every file the catalog still lists or still means to delete (anything else in the folder is an orphan)."""
    rows = conn.execute("SELECT name FROM archive_files UNION ALL SELECT name FROM archive_garbage")
    names = {str(r[0]) for r in rows}
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'access_files'").fetchone() is not None:
        names.update(str(r[0]) for r in conn.execute("SELECT name FROM access_files"))  # (access_settle.py)
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'directory_files'").fetchone() is not None:
        names.update(
            str(r[0]) for r in conn.execute("SELECT name FROM directory_files")
        )  # (directory_settle.py)
    return names
