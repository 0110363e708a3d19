"""A database file removed by another program while the writer had it open, written back from that connection.

Removing a file that is open only takes its name away: the writer's connection still reads the whole database
(its pages, and the write-ahead log it holds open) until it is closed. Opening the path again, as after a removed
log, would start a new, empty database and lose every event, alert and read mark in it. So before letting go of
it, the writer copies the database it still has open into a new file beside the path (SQLite's online backup,
through SQLite only) and gives that file the name. A file another program put at the name meanwhile is theirs:
it is never overwritten, and the writer opens it as it would any replaced file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
from pathlib import Path

from tenant_events.errors import StorageError
from tenant_events.store.schema import make_private


def write_back(conn: sqlite3.Connection, path: Path) -> bool:
    """Copy the database `conn` has open into a new file named `path`. False when a file took the name first
    (nothing written there); StorageError in words when it cannot be written (a full disk): nothing is lost, the
    writer keeps its connection and tries again."""
    spare = path.with_name(f".{path.name}.writing-back")
    _remove(spare)
    try:
        make_private(spare)  # 0600 before SQLite writes into it
        copy = sqlite3.connect(spare, isolation_level=None)
        try:
            conn.backup(copy)
        finally:
            copy.close()
        os.link(spare, path)  # never over a file that appeared at the name meanwhile
    except FileExistsError:
        return False
    except (OSError, sqlite3.Error) as exc:
        full = (isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)) or "full" in str(exc)
        raise StorageError(
            f"{path.name} was removed by another program and cannot be written back: {exc}",
            "free some space in the data dir; Tenant Events tries again by itself"
            if full
            else "Tenant Events tries again by itself; check the data dir",
        ) from None
    finally:
        _remove(spare)
    return True


def _remove(spare: Path) -> None:
    for name in (spare.name, spare.name + "-journal", spare.name + "-wal", spare.name + "-shm"):
        with contextlib.suppress(FileNotFoundError):
            spare.with_name(name).unlink()
