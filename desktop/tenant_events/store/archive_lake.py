"""A team's shared archive: DuckLake, its catalog in PostgreSQL (or any catalog DuckLake takes), its Parquet files
on a shared path (docs/archive.md "Team archive").

The relay holding the lease moves its events there instead of into local files: the same records and token
lists, as rows of the lake's `events` and `tokens` tables, and a row of `moves` naming the seq range, all in ONE
lake transaction. The lake is written before the relay's own database lets go of the rows (archive_move.py),
so a crash in between leaves rows in both; the next move finds them in `moves` and only commits the local half
(`write_lake` skips what the lake holds). The relay's readers read lake rows only up to its `archived_upto`,
as with local files. Viewers read the lake alone (`TeamArchive`): each of their reads takes the `moves` it
sees and reads rows of those ranges only, so a move committing meanwhile is seen whole or not at all.

The catalog string is libpq's (`postgres:dbname=… host=… user=…`) without a password: PostgreSQL's own
password file or the environment supply it, so no secret is written into a database or a log.
"""

from __future__ import annotations

import hashlib
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from tenant_events.store import duck
from tenant_events.store.archive_build import (
    EVENT_COLUMNS,
    Built,
    LiveRow,
    events_select,
    scratch,
    tokens_select,
)
from tenant_events.store.archive_catalog import ArchiveFile, ArchiveSnapshot, Lake

LAKE_PREFIX: Final = "lake:"
_lock = threading.Lock()
_attached: dict[tuple[str, str, bool], str] = {}


def attach(lake: Lake, read_only: bool) -> str:
    """The lake attached to the shared engine (once per process), its tables made; returns its alias."""
    key = (lake.catalog, lake.data_path, read_only)
    with _lock:
        if key in _attached:
            return _attached[key]
    if lake.catalog.startswith("postgres:"):
        duck.load_extension("postgres_scanner")
    duck.load_extension("ducklake")
    alias = "lake_" + hashlib.sha256(repr(key).encode()).hexdigest()[:12]
    conn = duck.engine()
    options = f"DATA_PATH {duck.literal(lake.data_path)}" + (", READ_ONLY" if read_only else "")
    conn.execute(f"ATTACH {duck.literal('ducklake:' + lake.catalog)} AS {alias} ({options})")
    if not read_only:
        columns = ", ".join(f"{n} {t}" for n, t in zip(EVENT_COLUMNS, _TYPES, strict=True))
        conn.execute(f"CREATE TABLE IF NOT EXISTS {alias}.events ({columns})")
        conn.execute(f"CREATE TABLE IF NOT EXISTS {alias}.tokens (term VARCHAR, n BIGINT, seqs BIGINT[])")
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {alias}.moves (first_seq BIGINT, last_seq BIGINT, rows BIGINT)"
        )
    with _lock:
        _attached[key] = alias
    return alias


def _types() -> tuple[str, ...]:
    from tenant_events.store.archive_build import _COLUMNS

    return tuple(t for _n, t in _COLUMNS)


_TYPES: Final = _types()


def write_lake(lake: Lake, rows: Sequence[LiveRow]) -> Built:
    """`rows` into the lake in one lake transaction (those it already holds left out); the catalog entry of the
    move for the relay's own database."""
    alias = attach(lake, read_only=False)
    cur = duck.cursor()
    try:
        held = int(cur.execute(f"SELECT coalesce(max(last_seq), 0) FROM {alias}.moves").fetchone()[0])  # type: ignore[index]  # noqa: S608
        fresh = [r for r in rows if r[0] > held]
        if fresh:
            with tempfile.TemporaryDirectory(prefix="tenant-events-lake-") as work_dir:
                work = Path(work_dir)
                scratch(fresh, work)
                cur.execute("BEGIN")
                try:
                    cur.execute(f"INSERT INTO {alias}.events {events_select(work)}")
                    cur.execute(f"INSERT INTO {alias}.tokens {tokens_select(work)}")
                    cur.execute(
                        f"INSERT INTO {alias}.moves VALUES (?, ?, ?)",  # noqa: S608
                        [fresh[0][0], fresh[-1][0], len(fresh)],
                    )
                    cur.execute("COMMIT")
                except BaseException:
                    cur.execute("ROLLBACK")
                    raise
    finally:
        cur.close()
    first, last = rows[0][0], rows[-1][0]
    times = [r[5] for r in rows]
    entry = ArchiveFile(
        f"{LAKE_PREFIX}{first}-{last}", "lake", first, last, min(times), max(times), len(rows), 0
    )
    return Built(entry, ())


def ranges(files: Sequence[ArchiveFile]) -> str:
    """The seq ranges of lake entries as a condition."""
    return " OR ".join(f"seq BETWEEN {int(f.first_seq)} AND {int(f.last_seq)}" for f in files) or "false"


class TeamArchive:
    """A viewer's read-only view of a team's lake: its `snapshot()` lists the moves committed so far, which an
    `ArchiveReader` over `lake` reads (each move whole or not at all)."""

    def __init__(self, lake: Lake) -> None:
        self.lake = lake
        self.alias = attach(lake, read_only=True)

    def snapshot(self) -> ArchiveSnapshot:
        """The moves committed so far (none while the relay has not made the lake's tables)."""
        import duckdb

        cur = duck.cursor()
        try:
            if not cur.execute(
                "SELECT 1 FROM duckdb_tables() WHERE database_name = ? AND table_name = 'moves'", [self.alias]
            ).fetchall():
                return ArchiveSnapshot(0, (), self.lake)
            moves = cur.execute(
                f"SELECT first_seq, last_seq, rows FROM {self.alias}.moves ORDER BY last_seq DESC"  # noqa: S608
            ).fetchall()
        except duckdb.CatalogException:
            return ArchiveSnapshot(0, (), self.lake)
        finally:
            cur.close()
        files = tuple(
            ArchiveFile(f"{LAKE_PREFIX}{a}-{b}", "lake", int(a), int(b), 0, 0, int(n), 0) for a, b, n in moves
        )
        return ArchiveSnapshot(max((f.last_seq for f in files), default=0), files, self.lake)
