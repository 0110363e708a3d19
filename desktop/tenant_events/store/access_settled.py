"""The settled part of a tenant's access history: what a reader and the history itself need to know of it.

access_settle.py moves the spans that ended before the settled point S (a stamp) into Parquet files in the
archive folder and lists them in `access_files`; `counters.access_settled` holds S (0, or no row: nothing is
settled). A reader asking about a moment before S reads those files too (`held_at`); the history asks them
whether a link's history began before S (`with_history`).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from tenant_events.store import duck
from tenant_events.store.archive_layout import folder_of

SPAN_COLUMNS: Final = "rel, a, b, c, since, until, since_seq, until_seq"
Span = tuple[int, str, str, str, int, int, int, int | None]


@dataclass(frozen=True)
class Settled:
    """The settled part of the history a read transaction sees: the point and the files holding what ended
    before it (paths in the archive folder)."""

    point: int
    files: tuple[Path, ...]


def settled_point(conn: sqlite3.Connection) -> int:
    """S, 0 while nothing is settled (a file from before settling has no counter)."""
    row = conn.execute("SELECT value FROM counters WHERE name = 'access_settled'").fetchone()
    return int(row[0]) if row else 0


def listed(conn: sqlite3.Connection, database: Path) -> Settled:
    """Inside the caller's read transaction."""
    point = settled_point(conn)
    if not point:
        return Settled(0, ())
    folder = folder_of(database)
    names = [str(n) for (n,) in conn.execute("SELECT name FROM access_files ORDER BY name")]
    return Settled(point, tuple(folder / n for n in names))


def held_at(settled: Settled, moment: int) -> list[Span]:
    """The settled spans that held at stamp `moment` (none from S on: each ended before S)."""
    if moment >= settled.point or not settled.files:
        return []
    cur = duck.cursor()
    try:
        rows = cur.execute(
            f"SELECT {SPAN_COLUMNS} FROM read_parquet(?) WHERE since <= ? AND until > ?",  # noqa: S608
            [[str(p) for p in settled.files], moment, moment],
        ).fetchall()
    finally:
        cur.close()
    return [tuple(r) for r in rows]


def with_history(
    settled: Settled, keys: Iterable[tuple[int, str, str, str]]
) -> set[tuple[int, str, str, str]]:
    """Those of `keys` (links) with a settled span: their history began before S, whatever the live rows say."""
    wanted = list(keys)
    if not wanted or not settled.files:
        return set()
    cur = duck.cursor()
    try:
        cur.execute(
            "CREATE TEMP TABLE IF NOT EXISTS wanted_links (rel INTEGER, a VARCHAR, b VARCHAR, c VARCHAR)"
        )
        cur.execute("DELETE FROM wanted_links")
        cur.executemany("INSERT INTO wanted_links VALUES (?, ?, ?, ?)", wanted)
        rows = cur.execute(
            "SELECT DISTINCT s.rel, s.a, s.b, s.c FROM read_parquet(?) AS s"
            " SEMI JOIN wanted_links AS w ON s.rel = w.rel AND s.a = w.a AND s.b = w.b AND s.c = w.c",
            [[str(p) for p in settled.files]],
        ).fetchall()
    finally:
        cur.close()
    return {(int(r), str(a), str(b), str(c)) for r, a, b, c in rows}


def forget(conn: sqlite3.Connection, names: Iterable[str], now: float) -> None:
    """Files out of the list, into the archive's garbage (deleted from disk after its grace period: a reader
    may still read them); inside the caller's transaction."""
    for name in names:
        conn.execute("DELETE FROM access_files WHERE name = ?", (name,))
        conn.execute("INSERT OR REPLACE INTO archive_garbage (name, since) VALUES (?, ?)", (name, now))


def clear(conn: sqlite3.Connection, now: float | None = None) -> None:
    """Forget the settled part (`tenant-events reindex` builds the whole history again into the live file);
    inside the caller's transaction."""
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'access_files'").fetchone() is None:
        return
    names = [str(n) for (n,) in conn.execute("SELECT name FROM access_files")]
    forget(conn, names, time.time() if now is None else now)
    conn.execute("UPDATE counters SET value = 0 WHERE name = 'access_settled'")
