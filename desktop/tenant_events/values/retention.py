"""How long a tenant's database keeps its events, from the settings; the monitor applies it while it runs."""

from __future__ import annotations

from dataclasses import dataclass

RETENTION_INTERVAL = 600.0  # seconds between background retention passes


@dataclass(frozen=True)
class Retention:
    """Settings' retention for one tenant; applied at start and then every `interval` seconds."""

    max_age_days: float | None = None
    max_rows: int | None = None
    interval: float = RETENTION_INTERVAL
