"""The team archive's older events in a database's entity directory and access history (docs/archive.md "Team
archive", docs/access-review.md "Where it is kept").

A viewer that joined the team late holds the recent past only; its reads show the lake's rows before its own
oldest event (team_view.py). Its directory and access history take those rows in too, as `reindex` takes in a
local archive's: a chunk of lake rows read on a worker (`plan`), applied on the writer in ONE transaction that also
records how far it got (`apply`), so the work goes on where it stopped after a restart or a kill, and each row is
taken in once. Only the directory's and the history's event types are read.

Which rows. Those the view shows from the lake that the database never held itself: the lake rows below its own
oldest event. Once the lake holds that event (the seam found by identity), that place is the intake's bound, kept
for good: when the database later lets go of its older events, the view's seam rises over events its directory and
history took in from the database itself, and those are not taken in again. Before that (the relay has not moved
that far yet) the rows are taken in up to the view's seam, which only rises as the relay moves. A database that
let go of events before it took any lake rows in (made by a version without this) takes none: `tenant-events
reindex` builds its directory and history again from its own tiers and the lake.

The lake's rows are stamped with their lake seq (LAKE_SEQ_BASE + place), as the view numbers them, so the events a
change names are read back from the lake by seq (access_events.py). Stamps within one millisecond may order
differently from a database that holds the same events under its own seqs.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from tenant_events.store import access_history, archive_catalog, directory, duck, team_view
from tenant_events.store.access_events import Row
from tenant_events.store.access_facts import TYPES
from tenant_events.store.archive_catalog import ArchiveSnapshot
from tenant_events.store.archive_lake import LAKE_SEQ_BASE
from tenant_events.store.archive_layout import folder_of
from tenant_events.store.archive_reader import ArchiveReader
from tenant_events.store.schema import connect, rollback
from tenant_events.values.team_archive import Lake

log = logging.getLogger(__name__)
CHUNK: Final = 2000  # lake rows of the directory's and history's types a transaction (~0.2 s of the writer)
NONE: Final = LAKE_SEQ_BASE  # `upto` before any row (the lake's first place is LAKE_SEQ_BASE + 1)
SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS lake_intake (
    id        INTEGER PRIMARY KEY CHECK (id = 1),
    catalog   TEXT NOT NULL,
    data_path TEXT NOT NULL,
    upto      INTEGER NOT NULL,  -- lake seq of the last row taken in (NONE: none yet)
    bound     INTEGER            -- rows below it are the database's to take in; NULL: not known for good yet
)
"""


@dataclass(frozen=True)
class Step:
    """One transaction's worth: the rows after `low` up to `high` (`low` None: no position recorded yet)."""

    lake: Lake
    low: int | None
    high: int
    bound: int | None
    rows: tuple[Row, ...]
    first_ms: int | None


def position(conn: sqlite3.Connection, lake: Lake) -> tuple[int, int | None] | None:
    """(upto, bound) recorded for `lake`, or None (none yet, or for another lake)."""
    known = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'lake_intake'"
    ).fetchone()
    if known is None:
        return None
    row = conn.execute("SELECT catalog, data_path, upto, bound FROM lake_intake WHERE id = 1").fetchone()
    if row is None or (str(row[0]), str(row[1])) != (lake.catalog, lake.data_path):  # (the lake's identity)
        return None
    return int(row[2]), None if row[3] is None else int(row[3])


def _behind(at: tuple[int, int | None]) -> bool:
    return at[1] is None or at[0] < at[1] - 1


def pending(conn: sqlite3.Connection) -> bool:
    """Whether lake rows may still come into the directory and history (the upkeep does not settle their past
    meanwhile: a fact stamped before the settled point would count from it on)."""
    lake = team_view.recorded(conn)
    at = position(conn, lake) if lake is not None else None
    return at is not None and _behind(at)


def due(conn: sqlite3.Connection) -> bool:
    """Whether lake rows may be due (a position not recorded yet, or not at its bound): `plan` reads the lake."""
    lake = team_view.recorded(conn)
    if lake is None:
        return False
    at = position(conn, lake)
    return at is None or _behind(at)


def restart(conn: sqlite3.Connection) -> None:
    """`reindex` builds the directory and history again: the lake's rows go in again after the database's own,
    up to the view's seam as it is now (its own events are all read from its tiers); in its transaction."""
    conn.execute(SCHEMA)
    conn.execute("DELETE FROM lake_intake")
    lake = team_view.recorded(conn)
    if lake is not None:
        conn.execute(
            "INSERT INTO lake_intake (id, catalog, data_path, upto) VALUES (1, ?, ?, ?)",
            (lake.catalog, lake.data_path, NONE),
        )


def plan(database: Path, chunk: int = CHUNK) -> Step | None:
    """The next chunk of lake rows to take in, read in one snapshot of the database and the lake; None when
    there is nothing (more) to do. UserFixableError when the lake cannot be read."""
    conn = connect(database, readonly=True)
    archive = ArchiveReader(folder_of(database))
    try:
        conn.execute("BEGIN")
        try:
            return _plan(conn, archive, chunk)
        finally:
            conn.execute("COMMIT")
    finally:
        archive.close()
        conn.close()


def _plan(conn: sqlite3.Connection, archive: ArchiveReader, chunk: int) -> Step | None:
    lake = team_view.recorded(conn)
    if lake is None:
        return None
    at = position(conn, lake)
    let_go = team_view.let_go_upto(conn)
    if at is None and let_go:  # its older events went before any lake row came in: those are reindex's
        log.info("%s: run `tenant-events reindex` to name the team archive's older entities", archive.folder)
        return Step(lake, None, NONE, NONE + 1, (), None)
    low, bound = at if at is not None else (NONE, None)
    if bound is not None and low >= bound - 1:
        return None
    own = conn.execute("SELECT 1 FROM events LIMIT 1").fetchone() or archive_catalog.snapshot(conn).files
    if not own and not let_go:
        return None  # (its oldest event is not known yet: the lake's newest may be the hub's next ones)
    snap = archive.use(team_view.snapshot(conn, archive.folder))
    if snap.team is None:  # the view shows nothing of the lake now (a move may bring the seam back: wait)
        return None
    below = snap.team.file.last_seq + 1
    if bound is None and (let_go or team_view.seam_held(conn, archive.folder, snap)):
        bound = below
    limit = min(below, bound) if bound is not None else below
    kinds = ", ".join(duck.literal(t) for t in sorted(TYPES | set(directory.types(conn))))
    rows = _rows(archive, snap, low, limit, kinds, chunk)
    high = max(low, rows[-1][0] if len(rows) == chunk else limit - 1)
    if at is not None and high == low and at[1] == bound:
        return None
    return Step(lake, None if at is None else low, high, bound, rows, _first_ms(archive, snap, low, high))


def _rows(
    archive: ArchiveReader, snap: ArchiveSnapshot, low: int, limit: int, kinds: str, chunk: int
) -> tuple[Row, ...]:
    where = f"seq > {int(low)} AND seq < {int(limit)} AND type IN ({kinds})"
    files = snap.covering(low + 1, limit - 1) if limit - 1 > low else ()
    if not files:
        return ()
    found: list[Row] = []
    for part in archive.chunks(files, "seq, time_ms, type, raw", where, f"ORDER BY seq LIMIT {chunk}", chunk):
        found += [(int(s), int(t), str(k), str(r)) for s, t, k, r in part]
    return tuple(found)


def _first_ms(archive: ArchiveReader, snap: ArchiveSnapshot, low: int, high: int) -> int | None:
    """The earliest time of any lake event in (low, high]: where the history is complete from."""
    files = snap.covering(low + 1, high) if high > low else ()
    if not files:
        return None
    where = f"seq > {int(low)} AND seq <= {int(high)}"
    found = [r for part in archive.chunks(files, "min(time_ms)", where, "", 1) for r in part]
    return int(found[0][0]) if found and found[0][0] is not None else None


def apply(conn: sqlite3.Connection, step: Step) -> bool:
    """On the writer's connection: the step's rows into the directory and the history, and the new position, in
    ONE transaction; False (nothing changed) when the position is no longer the one it was planned from."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(SCHEMA)
        at = position(conn, step.lake)
        if (at[0] if at is not None else None) != step.low:
            conn.execute("ROLLBACK")
            return False
        directory.advance_lake(conn, step.rows)
        access_history.take_in(conn, step.rows, step.first_ms)
        conn.execute(
            "INSERT OR REPLACE INTO lake_intake (id, catalog, data_path, upto, bound) VALUES (1, ?, ?, ?, ?)",
            (step.lake.catalog, step.lake.data_path, step.high, step.bound),
        )
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise
    return True


_SEQ_COLUMNS: Final = (
    ("access_spans", "since_seq"),
    ("access_spans", "until_seq"),
    ("access_marks", "seq"),
    ("access_ends", "seq"),
)


def let_go(conn: sqlite3.Connection, lake: Lake, places: Sequence[tuple[int, int]]) -> None:
    """In a viewer's move that lets go of events the lake holds ((seq, lake seq) each), in its transaction: the
    intake stops below the first of them for good, if it had not stopped yet (they were taken in from the
    database itself); and the access history names them by their lake seq from now on, so the events behind a
    change are still read, from the lake. (Spans settled into the archive folder before keep the seqs they were
    settled with.)"""
    if not places:
        return
    conn.execute(SCHEMA)
    conn.execute(
        "UPDATE lake_intake SET bound = ? WHERE id = 1 AND bound IS NULL AND catalog = ? AND data_path = ?",
        (min(p[1] for p in places), lake.catalog, lake.data_path),
    )
    conn.execute(
        "CREATE TEMP TABLE IF NOT EXISTS lake_places (seq INTEGER PRIMARY KEY, lake INTEGER NOT NULL)"
    )
    conn.executemany("INSERT OR REPLACE INTO temp.lake_places (seq, lake) VALUES (?, ?)", places)
    low, high = min(p[0] for p in places), max(p[0] for p in places)
    for table, column in _SEQ_COLUMNS:
        conn.execute(
            f"UPDATE {table} SET {column} = (SELECT p.lake FROM temp.lake_places AS p WHERE p.seq = {table}.{column})"  # noqa: S608
            f" WHERE {column} BETWEEN ? AND ? AND {column} IN (SELECT p.seq FROM temp.lake_places AS p)",
            (low, high),
        )
    conn.execute("DELETE FROM temp.lake_places")


Run = Callable[[Callable[[sqlite3.Connection], bool]], bool]


def catch_up(database: Path, run: Run, chunk: int = CHUNK) -> int:
    """Take in every lake row due, a chunk a transaction (`run(work)`: `work` on the writer's connection);
    returns how many rows it took in."""
    taken = 0
    while (step := plan(database, chunk)) is not None:
        if not run(lambda c, s=step: apply(c, s)):  # type: ignore[misc]
            break  # (another process took this chunk in)
        taken += len(step.rows)
    return taken
