"""What the user prefers beyond tenants: when desktop notifications come, and how long events are kept."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tenant_events.alert_settings import WEEKDAYS, Weekday
from tenant_events.settings.field_checks import known_event_types
from tenant_events.values.retention import Retention

_HH_MM = re.compile(r"^(?:[01]\d|2[0-3]):[0-5]\d$")


class NotificationSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    enabled: bool = Field(True, description="raise desktop notifications for new events")
    event_types: list[str] = Field(default_factory=list, description="types that notify; empty = all")
    do_not_disturb: bool = Field(False, description="suppress notifications; events are still stored")
    quiet_hours: tuple[str, str] | None = Field(
        None, description="('22:00', '07:00'): no notifications between"
    )
    do_not_disturb_until: float | None = Field(
        None, description="unix time when a timed do-not-disturb (1 h / until tomorrow) ends; None = off"
    )
    quiet_days: list[Weekday] = Field(
        default_factory=lambda: list(WEEKDAYS),
        description="days the quiet hours apply on (the day they start)",
    )
    critical_passes_dnd: bool = Field(
        False, description="alerts of critical rules notify even during do-not-disturb and quiet hours"
    )
    repeat_minutes: float = Field(
        60.0,
        ge=0,
        le=10_080,
        description="a critical alert nobody acknowledged notifies again this often; 0 = never",
    )

    @field_validator("event_types")
    @classmethod
    def _event_types(cls, v: list[str]) -> list[str]:
        return known_event_types(v)

    @field_validator("quiet_hours")
    @classmethod
    def _quiet_hours(cls, v: tuple[str, str] | None) -> tuple[str, str] | None:
        for t in v or ():
            if not _HH_MM.match(t):
                raise ValueError(f"{t!r} is not a time of day as HH:MM (00:00–23:59)")
        return v


class RetentionSettings(BaseModel):
    """Two tiers per tenant (docs/archive.md): the live database keeps the recent past; older events move to the
    archive, which deletes them past its own setting."""

    model_config = ConfigDict(extra="forbid")
    keep_live_days: int = Field(30, ge=1, le=3650, description="events this recent stay in the live database")
    keep_archive_days: int | None = Field(
        400, ge=1, description="archived events older than this are deleted; None = keep"
    )
    max_events: int | None = Field(
        None, ge=1000, description="live events per tenant at most; the oldest move to the archive early"
    )

    def tiers(self) -> Retention:
        """What the monitor applies (store/archive_keeper.py)."""
        return Retention(
            keep_live_days=self.keep_live_days,
            keep_archive_days=self.keep_archive_days,
            max_live_rows=self.max_events,
        )

    @model_validator(mode="before")
    @classmethod
    def _older_file(cls, data: Any) -> Any:
        """A settings file from before the archive: its `max_age_days` (delete events older than this) is the
        archive's setting now; its `max_events` cap moves events instead of deleting them."""
        if isinstance(data, dict) and "max_age_days" in data:
            data = dict(data)
            age = data.pop("max_age_days")
            data.setdefault("keep_archive_days", age)
        return data
