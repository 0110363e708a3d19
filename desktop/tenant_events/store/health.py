"""Is a tenant's database file fit to read? One clear `StorageError` naming the file and what is wrong.

The read commands (`export`, `alerts`, `timeline`, `access`, `reindex`, `rules --try`) look before they read, so a damaged
file — not SQLite at all, empty, cut short, bit-flipped, another program's database, a directory — is one line
(exit 5) and the file is left exactly as it was: a reader never moves it aside or writes into it. Damage that only
shows deep inside the file, mid-read, goes through `database_errors`, which says the same about it.
`stream` and the app open through database_open.open_database instead, which moves a damaged file aside.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from tenant_events.errors import StorageError

HINT: Final = "restore it from a backup, or move it away and run tenant-events stream to start a new one"
_NOT_UTF8: Final = "Could not decode to UTF-8"  # Python's sqlite3, reading a TEXT value that is not UTF-8


def damaged(path: Path | str, what: str, hint: str = HINT) -> StorageError:
    return StorageError(f"the event database {path} {what}", hint)


def check_readable(path: Path) -> None:
    """Raise StorageError unless `path` looks like a Tenant Events database SQLite can read; never writes.

    Only SQLite opens the file: the process may already hold a connection to it (the app's writer, a command's
    reader), and closing any other descriptor of the file would drop every POSIX lock the process holds on it —
    the next process to close its connection would then take itself for the last one and delete the write-ahead
    log under the running writer. What the file is, is learnt from `stat` and from SQLite's own answers."""
    from tenant_events.store.schema import SCHEMA_VERSION

    try:
        st = path.stat()
    except OSError as exc:
        raise StorageError(f"cannot read the event database {path}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise damaged(path, "is a directory, not a database file", "move the directory away")
    if not stat.S_ISREG(st.st_mode):
        raise damaged(path, "is not a regular file", "move it away")
    if not os.access(path, os.R_OK):
        raise StorageError(
            f"cannot read the event database {path}: permission denied", "check who owns the data dir (ls -l)"
        )
    if st.st_size == 0:
        raise damaged(path, "is empty (0 bytes): it holds no events")
    try:
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, check_same_thread=False)
    except sqlite3.Error as exc:
        raise damaged(path, f"cannot be opened ({exc})") from None
    try:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as exc:
        if _error_name(exc).startswith("SQLITE_NOTADB"):
            raise damaged(path, "is not a SQLite database (damaged, or another kind of file)") from None
        if _is_damage(exc):
            raise damaged(path, f"is damaged ({exc})") from None
        raise StorageError(f"cannot read the event database {path}: {exc}", "check the data dir") from None
    except UnicodeDecodeError:  # a flipped bit in the schema's own text: names SQLite hands back are not text
        raise damaged(path, "is damaged (its list of tables cannot be read)") from None
    finally:
        conn.close()
    if version > SCHEMA_VERSION:
        raise StorageError(
            f"{path} was written by a newer Tenant Events (schema {version}, this app knows {SCHEMA_VERSION})",
            "update Tenant Events, or use another --data-dir",
        )
    if "events" not in tables:
        held = ", ".join(sorted(tables)[:5]) or "no tables"
        raise damaged(path, f"is not a Tenant Events database (it holds {held})")


def check_intact(path: Path) -> None:
    """`PRAGMA quick_check` read-only: for commands that are about to write into the whole file (reindex), which
    must not touch a damaged one. It reads every page, so only where the command's own work is as large."""
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, check_same_thread=False)
    try:
        with database_errors(path):
            result = str(conn.execute("PRAGMA quick_check").fetchone()[0])
    finally:
        conn.close()
    if result != "ok":
        raise damaged(path, f"is damaged (integrity check: {result.splitlines()[0][:200]})")


@contextlib.contextmanager
def database_errors(where: Path | str) -> Iterator[None]:
    """SQLite failing while reading `where` (a file, or the dir of several) becomes one StorageError line."""
    try:
        yield
    except sqlite3.DatabaseError as exc:
        text = str(exc)
        if text.startswith(_NOT_UTF8):  # a stored text's bytes flipped; the message would quote that text
            raise damaged(where, "is damaged (a stored text is not valid UTF-8)") from None
        if isinstance(exc, sqlite3.OperationalError) and not _is_damage(exc):
            raise StorageError(
                f"cannot use the event database {where}: {text}", "check the data dir"
            ) from None
        raise damaged(where, f"is damaged ({text})") from None


def _error_name(exc: sqlite3.Error) -> str:
    return getattr(exc, "sqlite_errorname", "") or ""


def _is_damage(exc: sqlite3.DatabaseError) -> bool:
    name = _error_name(exc)
    return name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or "no such table" in str(exc)
