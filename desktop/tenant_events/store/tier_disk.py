"""The disk each tier of a tenant's events takes: the live database with its write-ahead log, and the archive
folder. Sizes only (stat), no file opened."""

from __future__ import annotations

import contextlib
from pathlib import Path

from tenant_events.store.archive_layout import folder_of
from tenant_events.values.retention import TierDisk


def disk_per_tier(database: Path) -> TierDisk:
    live = 0
    for name in (database.name, database.name + "-wal", database.name + "-shm"):
        with contextlib.suppress(OSError):
            live += database.with_name(name).stat().st_size
    archive = 0
    folder = folder_of(database)
    with contextlib.suppress(OSError):
        for entry in folder.iterdir():
            with contextlib.suppress(OSError):
                archive += entry.stat().st_size if entry.is_file() else 0
    return TierDisk(live, archive)
