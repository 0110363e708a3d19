"""What a failed or interrupted write of the writer (writer.py) means, in words and in what to do next."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tenant_events.errors import StorageError


def files_gone_error(path: Path, name: str) -> StorageError:
    """What happened, in words: the log removed, the database file itself removed (written back), or replaced."""
    if name != path.name:
        return StorageError(
            f"{name} was removed or replaced by another program while the event database {path} was open",
            "Tenant Events opens the database again and resumes from the stored cursor",
        )
    if not path.exists():
        return StorageError(
            f"the event database {path} was removed by another program while Tenant Events had it open",
            "Tenant Events writes it back from what it still has open and resumes from the stored cursor",
        )
    return StorageError(
        f"the event database {path} was replaced by another file while Tenant Events had it open",
        "Tenant Events opens the new file and resumes from the cursor stored in it",
    )


def disk_trouble(exc: sqlite3.Error) -> bool:
    """SQLITE_FULL or an I/O error: the disk's doing, not a bug."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    return name.startswith(("SQLITE_FULL", "SQLITE_IOERR"))


def needs_reopening(failure: StorageError | None) -> bool:
    """A commit failed with an I/O error (a file removed, a disk gone away): the connection is not to be trusted."""
    cause = failure.__cause__ if failure is not None else None
    name = getattr(cause, "sqlite_errorname", "") or ""
    return name.startswith("SQLITE_IOERR") or "disk I/O error" in str(failure)
