"""How long a tenant's events stay in each tier, from the settings; the monitor applies it while it runs
(store/archive_keeper.py): live events older than `keep_live_days` (or beyond the newest `max_live_rows`) move
to the archive, archived events older than `keep_archive_days` are deleted."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

RETENTION_INTERVAL: Final = 600.0  # seconds between background passes
KEEP_LIVE_DAYS: Final = 30.0
SETTLE_SECONDS: Final = 3600.0  # an event stays live at least this long (rules, directory, index take it in)


@dataclass(frozen=True)
class Retention:
    """One tenant's tiers; applied at start and then every `interval` seconds."""

    keep_live_days: float = KEEP_LIVE_DAYS
    keep_archive_days: float | None = None  # None: for ever
    max_live_rows: int | None = None  # beyond these, the oldest move early
    interval: float = RETENTION_INTERVAL
    settle_seconds: float = SETTLE_SECONDS


@dataclass(frozen=True)
class TierDisk:
    """The disk one tenant's events take in each tier, in bytes (store/tier_disk.py)."""

    live: int
    archive: int

    def words(self) -> str:
        """ "12.3 MB live, 1.2 GB archived": as the Settings dialog and `stream` say it."""
        return f"{_size(self.live)} live, {_size(self.archive)} archived"


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n} TB"
