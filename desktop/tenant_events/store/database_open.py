"""Opening a tenant's database file for the writer: checked, migrated, and a damaged one moved aside.

`quick_check` runs at open. A damaged file, or another program's database, is moved aside with a timestamp and a
fresh one started, and the caller gets an `OpenNotice` to show: events are never lost in place, and a file that
is only locked, read-only or on a full disk is never moved (it may be fine).
"""

from __future__ import annotations

import logging
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from tenant_events.errors import StorageError
from tenant_events.store.schema import connect, migrate

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class OpenNotice:
    """Something the user must be told about opening the database (e.g. a corrupt file was moved aside)."""

    message: str
    moved_to: Path | None = None


def open_database(path: Path) -> tuple[sqlite3.Connection, OpenNotice | None]:
    """Open (creating or migrating) the database at `path`; move a corrupt file aside rather than fail."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    notice = None
    try:
        conn = _open_checked(path)
    except sqlite3.DatabaseError as exc:
        if not _is_corruption(exc):
            # Locked, read-only, disk full, I/O error: the file may be fine — never move it aside for these.
            raise StorageError(f"cannot open the event database {path}: {exc}", "check the data dir") from exc
        moved = _move_aside(path)
        notice = OpenNotice(
            f"The event database {path} could not be used ({exc}); it was moved to {moved} and a new one "
            "started. Events from before are in the moved file.",
            moved,
        )
        log.error("%s", notice.message)
        conn = _open_checked(path)
    return conn, notice


class _IntegrityCheckFailed(sqlite3.DatabaseError):
    """`PRAGMA quick_check` found damage, or the file is another program's database."""


def _check_ours(conn: sqlite3.Connection) -> None:
    """A file with tables but no schema version is not ours: adding our tables to it would mix two programs'
    data (and a later `export` would read theirs as ours)."""
    # One statement, so one snapshot: read apart, a version of 0 and the tables another process's first migration
    # committed in between would call a database just being made someone else's (and move it aside).
    try:
        version, names = conn.execute(
            "SELECT (SELECT user_version FROM pragma_user_version),"
            " (SELECT group_concat(name, char(31)) FROM (SELECT name FROM sqlite_master WHERE type = 'table'"
            " ORDER BY name))"
        ).fetchone()
    except UnicodeDecodeError:  # a flipped bit in the schema's own text: damage, as quick_check would say
        raise _IntegrityCheckFailed("damaged: its list of tables cannot be read") from None
    if int(version) != 0:
        return
    tables = names.split("\x1f") if names else []
    if tables:
        raise _IntegrityCheckFailed(f"another program's database: it holds {', '.join(tables[:5])}")


def _is_corruption(exc: sqlite3.DatabaseError) -> bool:
    """Damage we may recover from by starting afresh: SQLITE_CORRUPT, SQLITE_NOTADB or a failed quick_check."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    return isinstance(exc, _IntegrityCheckFailed) or name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB"))


def _open_checked(path: Path) -> sqlite3.Connection:
    if path.is_file() and path.stat().st_size > 0:
        _peek(path)  # before connect() turns on WAL: that writes into the file, and it may not be ours
    try:
        conn = connect(path)
    except sqlite3.OperationalError as exc:
        if "unable to open" in str(exc):
            raise StorageError(f"cannot open the event database {path}: {exc}", "check the data dir") from exc
        raise
    try:
        result = conn.execute("PRAGMA quick_check").fetchone()[0]
        if result != "ok":
            raise _IntegrityCheckFailed(f"integrity check failed: {result}")
        _check_ours(conn)
        migrate(conn, path)
        # A read-only file system SQLite could still open (its -wal and -shm left there) refuses the chmod.
        try:
            path.chmod(0o600)
        except OSError as exc:
            raise StorageError(
                f"cannot open the event database {path}: {exc.strerror}", "check the data dir"
            ) from exc
    except BaseException:
        conn.close()
        raise
    return conn


def _peek(path: Path) -> None:
    """Another program's database is found read-only, so it is moved aside exactly as it was."""
    try:
        peek = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    except sqlite3.OperationalError:
        return  # cannot even open it read-only: connect() below says why
    try:
        _check_ours(peek)
    finally:
        peek.close()


def _move_aside(path: Path) -> Path:
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target = path.with_name(f"{path.stem}.corrupt-{stamp}{path.suffix}")
    path.rename(target)
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.rename(target.with_name(target.name + suffix))
    return target
