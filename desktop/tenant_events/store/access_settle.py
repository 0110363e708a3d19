"""Settles the access history older than the live tier's setting into the archive tier, so the live file grows
with its setting and not with the whole history (docs/access-review.md "Where it is kept").

The settled point S is a stamp (access_history.py: `time_ms << 20 | seq`) at a whole UTC day at or before the
live tier's cutoff. A span that ended before S can no longer change: it leaves `access_spans` for a Parquet file
in the archive folder, one per month of the spans' ends (`access.<month>.<n>.spans`; a month that has one
already gets a new file holding both, and the old one goes the archive's way of old files, deleted after a grace
period: archive_catalog.py). The marks and deletions before S go too, except the marks inside a span that still
holds at S: working a link out again starts at its span's first add (access_history.py `_rework`). One SQLite
transaction lists the files, deletes the rows and raises S, so a reader (access_reader.py), which reads the list
and the live spans in one read transaction, sees each span exactly once; a SIGKILL before it leaves an unlisted
file, which a later pass finds old and deletes (`orphans`).

What the live file keeps of the history is then: the spans that held at S or began after it, and the marks and
deletions since. A fact that arrives after its time was settled (an event delivered later than the live setting)
counts from S on (access_history.py `catch_up`).
"""

from __future__ import annotations

import contextlib
import secrets
import sqlite3
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from tenant_events.store.access_settled import SPAN_COLUMNS, Span, forget, listed
from tenant_events.store.archive_build import remove, write_rows
from tenant_events.store.archive_layout import folder_of
from tenant_events.store.directory import STAMP_SHIFT
from tenant_events.store.schema import connect, rollback
from tenant_events.store.writer import StoreWriter

DAY_MS: Final = 86_400_000
PREFIX: Final = "access."
SUFFIX: Final = ".spans"  # (Parquet; not named .parquet: the events' leftovers are found by that name)
_COLUMNS: Final = tuple(
    zip(
        SPAN_COLUMNS.split(", "),
        ("INTEGER", "VARCHAR", "VARCHAR", "VARCHAR", "BIGINT", "BIGINT", "BIGINT", "BIGINT"),
        strict=True,
    )
)
TABLE_SQL: Final = """
CREATE TABLE IF NOT EXISTS access_files (
    name TEXT PRIMARY KEY, month TEXT NOT NULL, rows INTEGER NOT NULL, bytes INTEGER NOT NULL,
    created_at REAL NOT NULL
) WITHOUT ROWID;
INSERT OR IGNORE INTO counters (name, value) VALUES ('access_settled', 0);
"""


def point_of(cutoff_s: float) -> int:
    """The settled point for a live cutoff: the start of its UTC day, as a stamp."""
    return (int(cutoff_s * 1000) // DAY_MS * DAY_MS) << STAMP_SHIFT


def settle(writer: StoreWriter, cutoff_s: float, now: float | None = None) -> int:
    """Settle what ended before the day of `cutoff_s` (the live tier's cutoff), a month of ends a transaction (a
    first pass over a long history holds neither the writer nor memory for long); blocking (it writes Parquet):
    on a worker thread, each catalog change on the writer thread. Returns the spans moved (0: nothing was due,
    or the history has not taken in every event before the point yet)."""
    target, moved = point_of(cutoff_s), 0
    while (step := _settle_step(writer, target, time.time() if now is None else now)) is not None:
        moved += step
    return moved


def _settle_step(writer: StoreWriter, target: int, now: float) -> int | None:
    """One step towards `target`: the spans that ended in the oldest month still live (or up to `target`);
    None when there is no step to take."""
    folder = folder_of(writer.path)
    conn = connect(writer.path, readonly=True)
    try:
        conn.execute("BEGIN")
        try:
            settled = listed(conn, writer.path)
            if target <= settled.point or _behind(conn, target >> STAMP_SHIFT):
                return None
            oldest = conn.execute("SELECT min(until) FROM access_spans").fetchone()[0]
            point = target if oldest is None else min(target, _next_month(int(oldest)))
            point = max(point, settled.point + 1)
            spans: list[Span] = conn.execute(
                f"SELECT {SPAN_COLUMNS} FROM access_spans WHERE until < ?",  # noqa: S608
                (point,),
            ).fetchall()
            months = _files_by_month(conn)
        finally:
            conn.execute("COMMIT")
    finally:
        conn.close()
    stale = (
        [] if settled.point else [n for names in months.values() for n in names]
    )  # (a history built again)
    if stale:
        months = {}
    by_month: dict[str, list[Span]] = defaultdict(list)
    for span in spans:
        by_month[_month(span[5])].append(span)
    built: list[tuple[str, str, int, int]] = []
    try:
        for month, rows in sorted(by_month.items()):
            built.append(_write(folder, month, rows, [folder / n for n in months.get(month, ())]))
        replaced = stale + [n for month in by_month for n in months.get(month, ())]
        done = writer.run_archive_job(
            lambda c: _commit(c, settled.point, point, built, replaced, now)
        ).result()
    except BaseException:
        remove(folder / b[0] for b in built)
        raise
    if not done:  # another process settled first
        remove(folder / b[0] for b in built)
        return None
    return len(spans)


def _next_month(stamp: int) -> int:
    """The stamp of the start of the UTC month after the one `stamp` falls in."""
    at = datetime.fromtimestamp((stamp >> STAMP_SHIFT) / 1000, UTC)
    following = datetime(at.year + at.month // 12, at.month % 12 + 1, 1, tzinfo=UTC)
    return int(following.timestamp() * 1000) << STAMP_SHIFT


def _behind(conn: sqlite3.Connection, point_ms: int) -> bool:
    """Settling waits while the history has not taken in every stored event before the point: an archived one
    (a file from before the history, a `reindex` building it again) or a live one."""
    counters = dict(
        conn.execute(
            "SELECT name, value FROM counters WHERE name IN ('access_upto', 'archived_upto')"
        ).fetchall()
    )
    upto = int(counters.get("access_upto", 0))
    if upto < int(counters.get("archived_upto", 0)):
        return True
    late = conn.execute("SELECT 1 FROM events WHERE seq > ? AND time_ms < ? LIMIT 1", (upto, point_ms))
    return late.fetchone() is not None


def _files_by_month(conn: sqlite3.Connection) -> dict[str, list[str]]:
    out: dict[str, list[str]] = defaultdict(list)
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'access_files'").fetchone() is None:
        return out
    for name, month in conn.execute("SELECT name, month FROM access_files"):
        out[str(month)].append(str(name))
    return out


def _month(stamp: int) -> str:
    return datetime.fromtimestamp((stamp >> STAMP_SHIFT) / 1000, UTC).strftime("%Y-%m")


def _write(folder: Path, month: str, spans: list[Span], earlier: list[Path]) -> tuple[str, str, int, int]:
    """One month's file: `spans` and the rows of its `earlier` files, by start; synced and in the folder."""
    name = f"{PREFIX}{month}.{secrets.token_hex(4)}{SUFFIX}"
    rows, size = write_rows(folder, name, _COLUMNS, spans, earlier, "since")
    return name, month, rows, size


def _commit(
    conn: sqlite3.Connection,
    was: int,
    point: int,
    built: list[tuple[str, str, int, int]],
    replaced: list[str],
    now: float,
) -> bool:
    """On the writer: the files listed, the settled rows deleted, the point raised; False (nothing changed) when
    another process settled meanwhile."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        for statement in TABLE_SQL.split(";"):  # (executescript would commit first)
            if statement.strip():
                conn.execute(statement)
        current = conn.execute("SELECT value FROM counters WHERE name = 'access_settled'").fetchone()[0]
        if int(current) != was:
            conn.execute("ROLLBACK")
            return False
        conn.executemany(
            "INSERT INTO access_files (name, month, rows, bytes, created_at) VALUES (?, ?, ?, ?, ?)",
            [(*b, now) for b in built],
        )
        forget(conn, replaced, now)
        conn.execute("DELETE FROM access_spans WHERE until < ?", (point,))
        # Marks before the point go unless they lie inside a span that still holds at it (every span left now
        # ends at or after the point): working that link out again reads from the span's first add.
        conn.execute(
            "DELETE FROM access_marks AS m WHERE m.at < ? AND NOT EXISTS (SELECT 1 FROM access_spans AS s"
            " WHERE s.rel = m.rel AND s.a = m.a AND s.b = m.b AND s.c = m.c AND s.since <= m.at)",
            (point,),
        )
        # A deletion before the point ended every span of its entity that began before it: none of those is
        # left, and working a link out again never reads before its span's first add.
        conn.execute("DELETE FROM access_ends WHERE at < ?", (point,))
        conn.execute("UPDATE counters SET value = ? WHERE name = 'access_settled'", (point,))
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise
    return True


def orphans(
    database: Path, known: set[str], now: float, age: float, pattern: str = f"{PREFIX}*{SUFFIX}"
) -> list[Path]:
    """Settled files (named as `pattern`) no list names (`known`: the archive's and the settled lists, and the
    garbage), older than `age`: a pass killed before its transaction."""
    folder = folder_of(database)
    if not folder.is_dir():
        return []
    found = []
    for path in folder.glob(pattern):
        with contextlib.suppress(FileNotFoundError):
            if path.name not in known and now - path.stat().st_mtime >= age:
                found.append(path)
    return found
