"""Moves the oldest live events into the archive tier, exactly once, and keeps the archive's files tidy.

A move (`move_once`, on a thread of its own: writing Parquet takes seconds):
  1. on a read connection, the next run of events to move: those just above `archived_upto` that are old
     enough (`eligible_upto`), at most MOVE_ROWS of them, and never past what the entity directory and the
     access history have taken in
  2. their archive files, one per month they fall in, written, synced and renamed into the folder
  3. on the writer thread, ONE transaction (`StoreWriter.commit_move` → `commit`): the files into the catalog,
     the rows out of `events`, `archived_upto` raised — or nothing, if another mover got there first
A SIGKILL before 3 commits leaves unlisted files (removed by the next mover, `sweep`); after it, the move is
whole. Readers see the catalog and the live rows in one snapshot (archive_catalog.py), so no event is ever
seen twice or not at all.

The live full-text index still holds the moved rows that had been indexed; the writer removes them a chunk at
a time when idle (`fts_cleanup_chunk`), reading their indexed text back from the archive. Readers count
full-text hits only above `archived_upto`, so the leftovers are never seen.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from tenant_events.store import access_history, directory, duck, fts_merge, lake_intake, team_view
from tenant_events.store import archive_catalog as catalog
from tenant_events.store.archive_build import Built, LiveRow, by_month, remove, write_month
from tenant_events.store.archive_lake import held_prefix, write_move
from tenant_events.store.archive_layout import EVENTS_SUFFIX, TOKENS_SUFFIX, folder_of
from tenant_events.store.archive_merge import merge
from tenant_events.store.fts_text import FTS_DELETE, indexed_raw
from tenant_events.store.indexer import counter
from tenant_events.store.schema import connect, rollback
from tenant_events.values.retention import Retention
from tenant_events.values.team_archive import Lake

log = logging.getLogger(__name__)

MOVE_ROWS: Final = 200_000  # events per move: one transaction deletes them from the live table
SETTLE_SECONDS: Final = (
    3600.0  # an event stays live at least this long (rules, directory and index take it in)
)
ORPHAN_AGE: Final = 3600.0  # an unlisted file this old is a crashed mover's, not one another mover is writing
MERGE_AT: Final = 6  # a month with this many files is merged into one
FTS_CLEANUP_ROWS: Final = 500
_LIVE_COLUMNS: Final = (
    "seq, event_id, stream_offset, type, time, time_ms, source, tenant, purpose, summary, raw, received_at"
)


def eligible_upto(conn: sqlite3.Connection, policy: Retention, now: float, limit: int = MOVE_ROWS) -> int:
    """The highest seq S such that every live event up to S may move: stored at least `settle_seconds` ago, and
    older than `keep_live_days` by its own time or by when it was stored (a far-future time cannot hold the
    archive back for longer than the setting), or beyond the newest `max_live_rows`. Never past the
    directory's watermark nor the access history's (each takes its events from the live table); at most `limit`
    events."""
    low = counter(conn, "archived_upto")
    cutoff_s = now - policy.keep_live_days * 86400
    settled = now - policy.settle_seconds
    high = min(directory.watermark(conn), access_history.watermark(conn), low + limit * 2)
    row = conn.execute(
        "SELECT min(seq) FROM (SELECT seq FROM events WHERE seq > ? AND seq <= ? AND"
        " (received_at >= ? OR (time_ms >= ? AND received_at >= ?)) ORDER BY seq LIMIT 1)",
        (low, high, settled, int(cutoff_s * 1000), cutoff_s),
    ).fetchone()
    stop = (int(row[0]) - 1) if row and row[0] is not None else high
    if policy.max_live_rows is not None:
        # beyond the newest max_live_rows: every settled event up to the one that many rows from the end
        over = conn.execute(
            "SELECT seq FROM events WHERE seq > ? ORDER BY seq DESC LIMIT 1 OFFSET ?",
            (low, policy.max_live_rows),
        ).fetchone()
        if over is not None:
            young = conn.execute(
                "SELECT min(seq) FROM events WHERE seq > ? AND received_at >= ?", (low, settled)
            ).fetchone()[0]
            stop = max(stop, min(int(over[0]), high, (int(young) - 1) if young is not None else high))
    if stop <= low:
        return low
    # at most `limit` rows (seq has holes where duplicates were dropped)
    last = conn.execute(
        "SELECT max(seq) FROM (SELECT seq FROM events WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?)",
        (low, stop, limit),
    ).fetchone()[0]
    return int(last) if last is not None else low


@dataclass(frozen=True)
class Planned:
    low: int  # archived_upto when read
    high: int  # the new archived_upto
    built: tuple[Built, ...]
    lake: Lake | None = None  # the team's archive holding the rows instead of local files (archive_lake.py)
    team_upto: int = 0  # the lake seq of the last of them
    rows: int = 0  # how many events the move takes out of the live table
    places: tuple[tuple[int, int], ...] = ()  # a viewer's: (seq, lake seq) of each event it lets go of


def plan(
    database: Path,
    policy: Retention,
    now: float | None = None,
    limit: int = MOVE_ROWS,
    lake: Lake | None = None,
    fence: Callable[[], bool] = lambda: True,
    writes_lake: bool = True,
) -> Planned | None:
    """Steps 1 and 2: the files of the next move, written; None when nothing is due. With the team's `lake`: the
    relay (`writes_lake`) writes the rows into it, its lease `fence` asked before the lake commits; a viewer
    lets go of the rows the lake holds already, from the first on."""
    conn = connect(database, readonly=True)
    try:
        conn.execute("BEGIN")
        try:
            low = counter(conn, "archived_upto")
            high = eligible_upto(conn, policy, time.time() if now is None else now, limit)
            if high <= low:
                return None
            rows: list[LiveRow] = conn.execute(
                f"SELECT {_LIVE_COLUMNS} FROM events WHERE seq > ? AND seq <= ? ORDER BY seq",  # noqa: S608
                (low, high),
            ).fetchall()
        finally:
            conn.execute("COMMIT")
    finally:
        conn.close()
    if lake is not None and writes_lake:
        return Planned(low, high, (), lake, write_move(lake, rows, fence), len(rows))
    if lake is not None:
        places = held_prefix(lake, rows)
        count = len(places)
        pairs = tuple((int(r[0]), p) for r, p in zip(rows, places, strict=False))
        return Planned(low, rows[count - 1][0], (), lake, places[-1], count, pairs) if count else None
    folder = folder_of(database)
    built: list[Built] = []
    try:
        for month, month_rows in sorted(by_month(rows).items()):
            built.append(write_month(folder, month, month_rows))
    except BaseException:
        remove(p for b in built for p in b.paths)
        raise
    return Planned(low, high, tuple(built), rows=len(rows))


def commit(conn: sqlite3.Connection, planned: Planned) -> bool:
    """Step 3, on the writer's connection: one transaction, or False (and nothing changed) if the archive moved
    on meanwhile. The caller removes the files of a move that did not commit."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        if counter(conn, "archived_upto") != planned.low:
            conn.execute("ROLLBACK")
            return False
        # Rows the indexer reached before this commit are in the live full-text index (it cannot reach the
        # others any more): those the idle-time cleanup must remove.
        fts_upto = counter(conn, "fts_upto")
        files = [replace(b.file, fts_upto=min(fts_upto, b.file.last_seq)) for b in planned.built]
        catalog.add_files(conn, files, planned.high)
        if planned.lake is not None and fts_upto > planned.low:
            # no file to read their indexed text back from later: out of the full-text index now
            indexed = conn.execute(
                "SELECT seq, event_id, summary, raw FROM events WHERE seq > ? AND seq <= ?",
                (planned.low, min(fts_upto, planned.high)),
            )
            conn.executemany(
                FTS_DELETE, ((s, e, summary, indexed_raw(raw)) for s, e, summary, raw in indexed)
            )
            fts_merge.note_removed(conn, min(fts_upto, planned.high) - planned.low)
        if planned.lake is not None:
            team_view.let_go(conn, planned.lake, planned.team_upto)
            lake_intake.let_go(conn, planned.lake, planned.places)  # (the history names them by lake seq now)
        conn.execute("DELETE FROM events WHERE seq > ? AND seq <= ?", (planned.low, planned.high))
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise
    return True


def take_garbage(conn: sqlite3.Connection, now: float | None = None) -> list[str]:
    """On the writer: the files past their grace period, forgotten by the catalog in one transaction; the
    caller deletes them (a crash in between leaves orphans, which `orphans` finds)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        due = catalog.garbage_due(conn, now)
        catalog.forget_garbage(conn, due)
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise
    return due


def orphans(database: Path, known: set[str], now: float | None = None) -> list[Path]:
    """Files and scratch folders in the archive folder that the catalog does not know, older than ORPHAN_AGE
    (so another process's move in progress is spared): a crashed mover's leftovers."""
    folder = folder_of(database)
    if not folder.is_dir():
        return []
    now = time.time() if now is None else now
    found = []
    for entry in folder.iterdir():
        with contextlib.suppress(FileNotFoundError):
            if now - entry.stat().st_mtime < ORPHAN_AGE:
                continue
            name = entry.name
            if entry.is_dir():
                if name.startswith((".build-", ".merge-", ".settle-")):
                    found.append(entry)
                continue
            events = (
                name.removesuffix(TOKENS_SUFFIX) + EVENTS_SUFFIX if name.endswith(TOKENS_SUFFIX) else name
            )
            if events.endswith(EVENTS_SUFFIX) and events not in known:
                found.append(entry)
    return found


def delete_paths(paths: Sequence[Path]) -> None:
    for path in paths:
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            remove([path])


def compaction_due(snap: catalog.ArchiveSnapshot, live_cutoff_ms: int) -> list[list[catalog.ArchiveFile]]:
    """Months to merge into one file, each a list of its files: a month with MERGE_AT files, or with two or more
    once it ended before the live tier's cutoff (no more moves land in it, but for late events). A file whose
    rows may still be in the live full-text index waits: its cleanup reads them from it."""
    months: dict[str, list[catalog.ArchiveFile]] = {}
    for f in snap.files:
        if f.fts_upto < f.first_seq:
            months.setdefault(f.month, []).append(f)
    due = []
    for month, files in months.items():
        if len(files) >= MERGE_AT or (len(files) >= 2 and _month_end_ms(month) <= live_cutoff_ms):
            due.append(files)
    return due


def _month_end_ms(month: str) -> int:
    year, number = (int(x) for x in month.split("-"))
    end = datetime(year + number // 12, number % 12 + 1, 1, tzinfo=UTC)
    return int(end.timestamp() * 1000)


def swap(conn: sqlite3.Connection, old: Sequence[catalog.ArchiveFile], new: Built) -> bool:
    """Replace `old` by their merge in one transaction, if they are all still listed (a retention pass may have
    dropped some meanwhile)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        names = [f.name for f in old]
        listed = conn.execute(
            f"SELECT count(*) FROM archive_files WHERE name IN ({','.join('?' * len(names))})",  # noqa: S608
            names,
        ).fetchone()[0]
        if listed != len(names):
            conn.execute("ROLLBACK")
            return False
        catalog.drop_files(conn, names)
        catalog.add_files(conn, [new.file], None)
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise
    return True


def merge_month(database: Path, files: Sequence[catalog.ArchiveFile]) -> Built:
    return merge(folder_of(database), files)


def expired(snap: catalog.ArchiveSnapshot, policy: Retention, now: float) -> list[str]:
    """Files whose every event is older than `keep_archive_days` (whole files go: docs/archive.md)."""
    if policy.keep_archive_days is None:
        return []
    cutoff_ms = int((now - policy.keep_archive_days * 86400) * 1000)
    return [f.name for f in snap.files if f.last_ms < cutoff_ms]


def drop_expired(conn: sqlite3.Connection, names: Sequence[str]) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        catalog.drop_files(conn, names)
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise


_IN_THE_INDEX: Final = " FROM archive_files WHERE fts_upto >= first_seq"  # moved rows still in the live index


def cleanup_due(conn: sqlite3.Connection) -> bool:
    """Whether moved rows are still in the live full-text index: `fts_cleanup_chunk` has work."""
    return conn.execute(f"SELECT 1{_IN_THE_INDEX} LIMIT 1").fetchone() is not None


def fts_cleanup_chunk(conn: sqlite3.Connection, database: Path) -> bool:
    """Remove up to FTS_CLEANUP_ROWS moved rows from the live full-text index, newest first, in one transaction;
    True while more are left. FTS5 needs each row's indexed text to remove it: the archive file has it."""
    row = conn.execute(
        f"SELECT name, fts_upto, first_seq{_IN_THE_INDEX} ORDER BY fts_upto DESC LIMIT 1"
    ).fetchone()
    if row is None:
        return False
    name, upto, first = str(row[0]), int(row[1]), int(row[2])
    cur = duck.cursor()
    try:
        source = f"read_parquet({duck.literal(str(folder_of(database) / name))})"
        rows = cur.execute(
            f"SELECT seq, event_id, summary, raw FROM {source} WHERE seq <= ? ORDER BY seq DESC LIMIT ?",  # noqa: S608
            [upto, FTS_CLEANUP_ROWS],
        ).fetchall()
    finally:
        cur.close()
    lowest = int(rows[-1][0]) if len(rows) == FTS_CLEANUP_ROWS else first
    conn.execute("BEGIN IMMEDIATE")
    try:
        # the text they were indexed with: as spelled up to `fts_spelled_upto` (indexed before fts_text.py)
        spelled = counter(conn, "fts_spelled_upto")
        conn.executemany(
            FTS_DELETE,
            [(s, e, summary, raw if s <= spelled else indexed_raw(raw)) for s, e, summary, raw in rows],
        )
        conn.execute("UPDATE archive_files SET fts_upto = ? WHERE name = ?", (lowest - 1, name))
        fts_merge.note_removed(conn, len(rows))
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise
    return True
