"""Building a tenant database's entity directory and access history again from its stored events (`tenant-events
reindex`), and bringing the access history up to date (`tenant-events access`).

Safe while the app or `tenant-events stream` writes to the same file: both are cleared in one short transaction
and refilled chunk by chunk, each chunk its own transaction, so the writer waits at most one chunk. Its own
upkeep goes on meanwhile; nothing depends on the order events are applied in (store/directory.py,
store/access_facts.py), so the two meet at the same result.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Final, TypeVar

from tenant_events.errors import StorageError
from tenant_events.store import access_history, archive_catalog, directory, directory_settled, lake_intake
from tenant_events.store.archive_layout import folder_of
from tenant_events.store.archive_reader import ArchiveReader
from tenant_events.store.database_open import open_database
from tenant_events.store.health import check_intact
from tenant_events.store.schema import SCHEMA_VERSION, connect, rollback

CHUNK: Final = 20_000
T = TypeVar("T")


def upgrade(path: Path) -> bool:
    """Bring an older database to the current schema (which builds its directory); True when it did."""
    reader = connect(path, readonly=True)
    try:
        version = int(reader.execute("PRAGMA user_version").fetchone()[0])
    finally:
        reader.close()
    if version >= SCHEMA_VERSION:
        return False
    conn, _notice = open_database(path)
    conn.close()
    return True


def reindex(path: Path, progress: Callable[[int, int], object] | None = None) -> int:
    """Rebuild the directory of the database at `path`; `progress(done, total)` in stored-seq units after each
    chunk. Returns the last seq covered. An older database is upgraded instead (its migration builds the directory
    in one transaction). A damaged file is refused before anything is written into it."""
    check_intact(path)
    upgraded = upgrade(path)
    try:
        conn = connect(path)
    except sqlite3.Error as exc:
        raise StorageError(f"cannot open the event database {path}: {exc}", "check the data dir") from exc
    try:
        if upgraded:
            top = directory.watermark(conn)
            if progress is not None:
                progress(top, top)
            return top
        top = _transaction(conn, lambda: _start(conn))
        done = 0
        while done < top:
            done = _transaction(conn, lambda: _chunk(conn, top))
            if progress is not None:
                progress(done, top)
        _access_chunks(conn)
        lake_intake.catch_up(path, _on(conn))  # the team archive's older events, after the database's own
    except sqlite3.OperationalError as exc:
        raise StorageError(f"cannot write to {path}: {exc}", "free disk space or check the data dir") from exc
    finally:
        conn.close()
    return top


def catch_up_access(path: Path) -> int:
    """Bring the access history of the database at `path` up to its last stored event (what the app's idle-time
    indexer would do next), a chunk a transaction; returns the stored seqs it took in. A database from an earlier
    version is upgraded first; one with nothing to take in is only read."""
    if not _access_behind(path) and not _lake_due(path):
        return 0
    check_intact(path)  # about to write: never into a damaged file
    upgrade(path)
    try:
        conn = connect(path)
    except sqlite3.Error as exc:
        raise StorageError(f"cannot open the event database {path}: {exc}", "check the data dir") from exc
    try:
        return _access_chunks(conn) + lake_intake.catch_up(path, _on(conn))
    except sqlite3.OperationalError as exc:
        raise StorageError(f"cannot write to {path}: {exc}", "free disk space or check the data dir") from exc
    finally:
        conn.close()


def _access_behind(path: Path) -> bool:
    """Whether the file is older than this version or holds stored events its access history has not taken in."""
    reader = connect(path, readonly=True)
    try:
        if int(reader.execute("PRAGMA user_version").fetchone()[0]) < SCHEMA_VERSION:
            return True
        return access_history.backlog(reader) > 0
    finally:
        reader.close()


def _lake_due(path: Path) -> bool:
    reader = connect(path, readonly=True)
    try:
        return lake_intake.due(reader)
    finally:
        reader.close()


def _on(conn: sqlite3.Connection) -> lake_intake.Run:
    return lambda work: work(conn)


def _access_chunks(conn: sqlite3.Connection) -> int:
    """Take stored events into the access history until it has them all; each chunk re-reads the watermark
    inside its transaction, so a writer doing the same meanwhile is no harm."""
    done = 0

    def chunk() -> tuple[int, bool]:
        before = access_history.watermark(conn)
        top = access_history.backlog(conn) + before  # the last stored seq, archived ones too
        more = access_history.catch_up(conn, top)
        return access_history.watermark(conn) - before, more

    more = True
    while more:
        taken, more = _transaction(conn, chunk)
        done += taken
    return done


def _start(conn: sqlite3.Connection) -> int:
    directory.install(conn)
    access_history.clear(conn)
    directory_settled.clear(conn)  # (every link and entity is taken in live again; the next upkeep settles)
    lake_intake.restart(conn)
    live = directory.clear(conn)
    return max(live, archive_catalog.snapshot(conn).upto)  # every event archived: the live table may be empty


def _chunk(conn: sqlite3.Connection, top: int) -> int:
    mark = directory.watermark(conn)
    upto = archive_catalog.snapshot(conn).upto
    if mark < upto:  # events the archive holds: read back from its files (the live table no longer has them)
        high = min(upto, mark + CHUNK)
        directory.advance_archived(conn, _archived(conn, mark + 1, high), high)
        return high
    if mark < top:
        directory.advance(conn, min(top, mark + CHUNK), CHUNK)
    return max(directory.watermark(conn), min(top, mark + CHUNK))


def _archived(conn: sqlite3.Connection, first: int, last: int) -> list[tuple[int, int, str, str]]:
    """The archived events with seq in [first, last] the directory takes anything from (in this transaction's
    snapshot of the catalog: the mover cannot change it while this transaction writes)."""
    snap = archive_catalog.snapshot(conn)
    reader = ArchiveReader(folder_of(Path(conn.execute("PRAGMA database_list").fetchone()[2])))
    try:
        return reader.raws_between(reader.use(snap), first, last, directory.types(conn))
    finally:
        reader.close()


def _transaction(conn: sqlite3.Connection, work: Callable[[], T]) -> T:
    conn.execute("BEGIN IMMEDIATE")
    try:
        result = work()
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise
    return result
