"""A database's reads together with its team's archive: the lake's events older than the database's own, as one
more archive "file" beside its own tiers (docs/archive.md "Team archive").

The lake numbers events below every seq of a database (archive_lake.py). Both follow the hub's order, so they are
put together at one event both hold, found by its identity (time and event id, the store's unique key): the
database's oldest event. Lake events before it come from the lake; that event and everything after it from the
database's own tiers — each event once, none missed at the seam:

    lake       ··· e1 e2 e3 [e4] e5 e6            (the relay's moves, in the hub's order)
    database               [e4] e5 e6 ··· live    (its own tiers: from where it started, or was kept back to)
    one view   ··· e1 e2 e3 [e4] e5 e6 ··· live

When the lake does not hold that event, the database's own record says where it meets the lake: the lake seq of
the last event it let go of because the lake held it (a viewer's mover, or the relay's own move: archive_move.py).
Without one: if the database holds the lake's first event (its oldest left after the lake's retention), the
lake starts inside the database's own history and adds nothing; otherwise the lake comes first, whole, when its
newest event is no newer than the database's oldest, else it is left out (the two do not meet).

A read takes the lake's head once: rows above it (a move committing meanwhile) are not part of the read, and
rows below it never change, so every read of one snapshot sees the same lake. The database records which lake it
is read with (`record`, written by the link that follows the hub), so every reader of the file — the window,
`export`, `timeline` — reads the same view.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Final

from tenant_events.store import archive_catalog, duck
from tenant_events.store.archive_build import EVENT_COLUMNS
from tenant_events.store.archive_catalog import ArchiveFile, ArchiveSnapshot
from tenant_events.store.archive_lake import LAKE_SEQ_BASE, NoLakeYet, attach, explain, head
from tenant_events.values.team_archive import Lake

if TYPE_CHECKING:
    import duckdb

TEAM_PREFIX: Final = "team:"
HEAD_TTL: Final = 1.0  # seconds a read reuses the lake's head (one catalog query per read saved)
TEAM_SQL: Final = """
CREATE TABLE IF NOT EXISTS team_archive (
    id        INTEGER PRIMARY KEY CHECK (id = 1),
    catalog   TEXT NOT NULL,  -- postgres:dbname=… host=… user=… (no password)
    data_path TEXT NOT NULL,
    upto      INTEGER,  -- lake seq of the last event this database let go of (NULL: none; lake seqs are < 0)
    storage   TEXT NOT NULL DEFAULT ''  -- object storage's endpoint, region, URL style (JSON; '' for a folder)
)
"""
_lock = threading.Lock()
_seams: dict[tuple[object, ...], int | None] = {}
_heads: dict[Lake, tuple[float, int]] = {}


def record(conn: sqlite3.Connection, lake: Lake | None) -> None:
    """On the writer: which lake this database is read with (None: none), one transaction (none at all for a
    database that never had one and gets none)."""
    if lake is None and recorded(conn) is None:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        _made(conn)
        if lake is None:
            conn.execute("DELETE FROM team_archive")
        else:
            _write(conn, lake)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def let_go(conn: sqlite3.Connection, lake: Lake, upto: int) -> None:
    """Inside a move's transaction: the database let go of its events up to lake seq `upto` (`lake` holds them;
    from now on it is read with it)."""
    _made(conn)
    _write(conn, lake)
    conn.execute("UPDATE team_archive SET upto = max(coalesce(upto, ?), ?) WHERE id = 1", (upto, upto))


def let_go_upto(conn: sqlite3.Connection) -> int:
    """The lake seq of the last event this database let go of (0: none)."""
    row = conn.execute("SELECT upto FROM team_archive WHERE id = 1").fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def recorded(conn: sqlite3.Connection) -> Lake | None:
    """The lake a database is read with (in the reader's snapshot)."""
    known = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'team_archive'"
    ).fetchone()
    if known is None:
        return None
    storage = "storage" if _has_storage(conn) else "''"
    row = conn.execute(f"SELECT catalog, data_path, {storage} FROM team_archive WHERE id = 1").fetchone()  # noqa: S608
    if row is None:
        return None
    reached = json.loads(row[2]) if row[2] else {}
    return Lake(str(row[0]), str(row[1]), **{k: str(v) for k, v in reached.items() if k in _STORAGE})


_STORAGE: Final = ("endpoint", "region", "url_style")


def _has_storage(conn: sqlite3.Connection) -> bool:
    return any(r[1] == "storage" for r in conn.execute("PRAGMA table_info(team_archive)"))


def _made(conn: sqlite3.Connection) -> None:
    """The table, with the storage column a database recorded before object storage lacks (in the caller's
    write transaction)."""
    conn.execute(TEAM_SQL)
    if not _has_storage(conn):
        conn.execute("ALTER TABLE team_archive ADD COLUMN storage TEXT NOT NULL DEFAULT ''")


def _write(conn: sqlite3.Connection, lake: Lake) -> None:
    """`lake` recorded: its catalog and place start the record anew (where the database let go up to belongs to
    the old lake); how the storage is reached (endpoint, region, URL style) may change without that."""
    was = recorded(conn)
    if was is None or (was.catalog, was.data_path) != (lake.catalog, lake.data_path):
        conn.execute("DELETE FROM team_archive")
        conn.execute(
            "INSERT INTO team_archive (id, catalog, data_path) VALUES (1, ?, ?)",
            (lake.catalog, lake.data_path),
        )
    reached = {k: getattr(lake, k) for k in _STORAGE if getattr(lake, k)}
    conn.execute(
        "UPDATE team_archive SET storage = ? WHERE id = 1", (json.dumps(reached) if reached else "",)
    )


@dataclass(frozen=True)
class TeamSlice:
    """The lake rows one read shows: seq below `below` (the lake's first row is LAKE_SEQ_BASE + 1)."""

    lake: Lake
    alias: str
    below: int

    @property
    def file(self) -> ArchiveFile:
        name = f"{TEAM_PREFIX}{self.alias}:{self.below}"
        return ArchiveFile(
            name, "team", LAKE_SEQ_BASE + 1, self.below - 1, 0, 0, self.below - LAKE_SEQ_BASE - 1, 0
        )

    def events_sql(self) -> str:
        return f"SELECT {', '.join(EVENT_COLUMNS)} FROM {self.alias}.events WHERE seq < {int(self.below)}"  # noqa: S608

    def tokens_sql(self) -> str:
        """Each move's lists, cut at `below` (a later move's are left out, the seam's move's cut)."""
        cut = f"list_filter(seqs, s -> s < {int(self.below)})"
        return (
            f"SELECT term, CASE WHEN upto < {int(self.below)} THEN n ELSE len({cut}) END AS n,"  # noqa: S608
            f" CASE WHEN upto < {int(self.below)} THEN seqs ELSE {cut} END AS seqs FROM {self.alias}.tokens"
        )


def snapshot(conn: sqlite3.Connection, folder: Path) -> ArchiveSnapshot:
    """The database's own archive catalog, with its team's lake rows as one more file when it is read with one
    (call inside the reader's read transaction; `folder`: the database's archive folder). UserFixableError when
    the lake cannot be read."""
    local = archive_catalog.snapshot(conn)
    lake = recorded(conn)
    if lake is None:
        return local
    found = team_slice(conn, folder, local, lake)
    if found is None:
        return local
    return replace(local, files=(*local.files, found.file), team=found)


def team_slice(
    conn: sqlite3.Connection, folder: Path, local: ArchiveSnapshot, lake: Lake
) -> TeamSlice | None:
    """The lake rows older than the database's own oldest event (None: none to show)."""
    import duckdb

    try:
        alias = attach(lake, read_only=True)
    except NoLakeYet:  # (nothing moved yet: nothing let go either)
        return None
    cur = duck.cursor()
    try:
        at, upto = _head(cur, lake, alias), let_go_upto(conn)
        if not at and not upto:  # (a head read a moment ago may be older than what this database let go of)
            return None
        oldest = _oldest_local(conn, cur, folder, local)
        key = (lake, at, oldest, upto)
        with _lock:
            known = key in _seams
            below = _seams.get(key)
        if not known:
            below = _seam(conn, cur, folder, local, alias, LAKE_SEQ_BASE + at + 1, oldest)
            with _lock:
                if len(_seams) > 256:
                    _seams.clear()
                _seams[key] = below
    except duckdb.Error as exc:
        with _lock:
            _heads.pop(lake, None)
        raise explain(lake, exc) from None
    finally:
        cur.close()
    return None if below is None or below <= LAKE_SEQ_BASE + 1 else TeamSlice(lake, alias, below)


def _head(cur: duckdb.DuckDBPyConnection, lake: Lake, alias: str) -> int:
    now = time.monotonic()
    with _lock:
        cached = _heads.get(lake)
    if cached is not None and now - cached[0] < HEAD_TTL:
        return cached[1]
    at = head(cur, alias)
    with _lock:
        _heads[lake] = (now, at)
    return at


Identity = tuple[int, str]  # (time_ms, event_id)


def _oldest_local(
    conn: sqlite3.Connection, cur: duckdb.DuckDBPyConnection, folder: Path, local: ArchiveSnapshot
) -> Identity | None:
    """The database's own first event, live or in its own archive files."""
    row = conn.execute("SELECT seq, time_ms, event_id FROM events ORDER BY seq LIMIT 1").fetchone()
    if not local.files or (row is not None and int(row[0]) < min(f.first_seq for f in local.files)):
        return (int(row[1]), str(row[2])) if row else None
    first = min(local.files, key=lambda f: f.first_seq)
    found = cur.execute(
        "SELECT time_ms, event_id FROM read_parquet(?) WHERE seq = ?",
        [str(folder / first.name), first.first_seq],
    ).fetchone()
    return (int(found[0]), str(found[1])) if found else None


def _seam(
    conn: sqlite3.Connection,
    cur: duckdb.DuckDBPyConnection,
    folder: Path,
    local: ArchiveSnapshot,
    alias: str,
    upper: int,
    oldest: Identity | None,
) -> int | None:
    """The lake seq the view's lake rows stop below, or None (module docstring)."""
    if oldest is None:
        return upper
    rows = f"{alias}.events"
    at = cur.execute(
        f"SELECT min(seq) FROM {rows} WHERE seq < ? AND time_ms = ? AND event_id = ?",  # noqa: S608
        [upper, oldest[0], oldest[1]],
    ).fetchone()
    if at is not None and at[0] is not None:
        return int(at[0])
    if upto := let_go_upto(conn):
        return upto + 1  # (the lake held these before the database let go of them: whatever head was read)
    oldest_kept = f"SELECT time_ms, event_id FROM {rows} WHERE seq < ? ORDER BY seq LIMIT 1"  # noqa: S608
    first = cur.execute(oldest_kept, [upper]).fetchone()
    if first is None or _held(conn, cur, folder, local, (int(first[0]), str(first[1]))):
        return None
    newest = cur.execute(f"SELECT max(time_ms) FROM {rows} WHERE seq < ?", [upper]).fetchone()  # noqa: S608
    return upper if newest is not None and newest[0] is not None and int(newest[0]) <= oldest[0] else None


def seam_held(conn: sqlite3.Connection, folder: Path, snap: ArchiveSnapshot) -> bool:
    """Whether the lake row the view's lake rows stop below is an event the database holds itself (its oldest,
    found by identity): the rows below it are then, for good, those it never held (lake_intake.py)."""
    import duckdb

    team = snap.team
    if not isinstance(team, TeamSlice):
        return False
    cur = duck.cursor()
    try:
        at = f"SELECT time_ms, event_id FROM {team.alias}.events WHERE seq = ?"  # noqa: S608
        row = cur.execute(at, [team.below]).fetchone()
        return row is not None and _held(conn, cur, folder, snap, (int(row[0]), str(row[1])))
    except duckdb.Error as exc:
        raise explain(team.lake, exc) from None
    finally:
        cur.close()


def _held(
    conn: sqlite3.Connection,
    cur: duckdb.DuckDBPyConnection,
    folder: Path,
    local: ArchiveSnapshot,
    event: Identity,
) -> bool:
    """Whether the database itself holds the event (live, or in its own archive files)."""
    if conn.execute("SELECT 1 FROM events WHERE time_ms = ? AND event_id = ?", event).fetchone():
        return True
    own = [str(folder / f.name) for f in local.files if not f.name.startswith(TEAM_PREFIX)]
    if not own:
        return False
    return bool(
        cur.execute(
            "SELECT 1 FROM read_parquet(?) WHERE time_ms = ? AND event_id = ? LIMIT 1", [own, *event]
        ).fetchall()
    )
