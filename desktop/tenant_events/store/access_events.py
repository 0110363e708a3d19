"""The stored events the access history is made from and answers with, from both tiers.

The archive mover (archive_move.py) never moves an event the history has not taken in, so on a file this
version has kept the history reads only the live table. Two kinds of file have events in the archive the history
has not seen: one whose events were archived before this version added the history, and one whose history
`tenant-events reindex` builds again. For those `history_rows` reads the archived part from the archive's files.
The diff's lines name the events that did each change, and those may since have moved: `events_by_seq` reads
both tiers in one snapshot (archive_catalog.py).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

import orjson

from tenant_events.store import archive_catalog, team_view
from tenant_events.store.archive_layout import folder_of
from tenant_events.store.archive_reader import ArchiveReader

Row = tuple[int, int, str, str]  # seq, time_ms, type, raw JSON


def history_rows(
    conn: sqlite3.Connection, low: int, high: int, types: Sequence[str]
) -> tuple[list[Row], int | None]:
    """Events of `types` with seq in (low, high], by seq, and the earliest time of any event there; inside the
    caller's transaction."""
    marks = ", ".join("?" * len(types))
    rows: list[Row] = conn.execute(
        f"SELECT seq, time_ms, type, raw FROM events WHERE seq > ? AND seq <= ? AND type IN ({marks})",  # noqa: S608
        (low, high, *types),
    ).fetchall()
    first = conn.execute(
        "SELECT min(time_ms) FROM events WHERE seq > ? AND seq <= ?", (low, high)
    ).fetchone()[0]
    snap = archive_catalog.snapshot(conn)
    if low < snap.upto and snap.covering(low + 1, high):
        archive = ArchiveReader(folder_of(database_path(conn)))
        try:
            archived = archive.raws_between(archive.use(snap), low + 1, min(high, snap.upto), types)
        finally:
            archive.close()
        rows = archived + rows  # every archived seq lies below every live one
        firsts = [f.first_ms for f in snap.covering(low + 1, high) if f.first_seq > low]
        if archived or firsts:
            first = min(x for x in (first, *(r[1] for r in archived), *firsts) if x is not None)
    return rows, (int(first) if first is not None else None)


def events_by_seq(conn: sqlite3.Connection, archive: ArchiveReader, seqs: Sequence[int]) -> list[Row]:
    """The stored events among `seqs`, from both tiers; inside the caller's read transaction."""
    wanted = orjson.dumps(sorted(set(seqs))).decode()
    rows: list[Row] = conn.execute(
        "SELECT e.seq, e.time_ms, e.type, e.raw FROM json_each(?) AS j CROSS JOIN events AS e ON e.seq = j.value",
        (wanted,),
    ).fetchall()
    snap = team_view.snapshot(conn, archive.folder)  # (the team archive's rows too: lake_intake.py)
    archived = sorted(s for s in set(seqs) if s <= snap.upto)
    if archived:
        rows += [(s, t, k, r) for s, k, r, t in archive.raws(archive.use(snap), archived)]
    return rows


def newest_ms(conn: sqlite3.Connection, upto: int) -> int | None:
    """The newest event time among seqs up to `upto`, from both tiers (the catalog knows each file's newest)."""
    live = conn.execute("SELECT max(time_ms) FROM events WHERE seq <= ?", (upto,)).fetchone()[0]
    archived = conn.execute("SELECT max(last_ms) FROM archive_files WHERE last_seq <= ?", (upto,)).fetchone()[
        0
    ]
    known = [int(x) for x in (live, archived) if x is not None]
    return max(known) if known else None


def time_of(conn: sqlite3.Connection, archive: ArchiveReader, seq: int) -> int | None:
    """The time of the event stored as `seq`, from either tier."""
    rows = events_by_seq(conn, archive, [seq])
    return int(rows[0][1]) if rows else None


def time_after(conn: sqlite3.Connection, archive: ArchiveReader, seq: int) -> int | None:
    """The time of the first event stored after `seq`, from either tier."""
    snap = archive_catalog.snapshot(conn)
    if seq < snap.upto:
        found = archive.time_after(archive.use(snap), seq)
        if found is not None:
            return found
    row = conn.execute("SELECT time_ms FROM events WHERE seq > ? ORDER BY seq LIMIT 1", (seq,)).fetchone()
    return int(row[0]) if row else None


def database_path(conn: sqlite3.Connection) -> Path:
    """The file of the connection's main database."""
    return Path(conn.execute("PRAGMA database_list").fetchone()[2])
