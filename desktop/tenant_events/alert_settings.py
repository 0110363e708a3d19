"""The alert part of the settings file: rules as data, working hours, when a backlog counts as a catch-up.

A leaf like the settings package (stdlib + pydantic only), kept apart so the settings stay small;
`Settings` (settings/document.py) holds an `AlertSettings` under `alerts`. The rules themselves are validated by alerts/rule_model.py.
"""

from __future__ import annotations

import re
import zoneinfo
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Weekday = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
WEEKDAYS: tuple[Weekday, ...] = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")  # datetime.weekday() order
_HH_MM = re.compile(r"^(?:[01]\d|2[0-3]):[0-5]\d$")


class WorkingHours(BaseModel):
    """When changes are expected; the "changes outside working hours" alert rule fires outside them."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    start: str = Field("08:00", description="HH:MM, local wall time")
    end: str = Field(
        "18:00", description="HH:MM; before `start`: the hours run past midnight; equal: the whole day"
    )
    days: list[Weekday] = Field(default_factory=lambda: list(WEEKDAYS[:5]), description="days they start on")
    timezone: str | None = Field(None, description="IANA name, e.g. Europe/Berlin; None = this computer's")

    @field_validator("start", "end")
    @classmethod
    def _hh_mm(cls, v: str) -> str:
        if not _HH_MM.match(v):
            raise ValueError(f"{v!r} is not a time of day as HH:MM (00:00–23:59)")
        return v

    @field_validator("timezone")
    @classmethod
    def _timezone(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                zoneinfo.ZoneInfo(v)
            except (zoneinfo.ZoneInfoNotFoundError, ValueError):
                raise ValueError(f"{v!r} is not a time zone name such as Europe/Berlin or UTC") from None
        return v


class AlertSettings(BaseModel):
    """Alert rules as data. `rules` holds changes to the built-in rules (by `id`, only the fields that differ)
    and rules of one's own; alerts/rule_model.py validates each entry on its own, so one bad rule is reported by
    name and the rest keep working (a bad entry here never moves the whole settings file aside)."""

    model_config = ConfigDict(extra="forbid")
    rules: list[dict[str, Any]] = Field(default_factory=list, description="rule overrides and custom rules")
    lists: dict[str, list[str]] = Field(
        default_factory=dict, description="named value lists rules test with in_list (e.g. partner domains)"
    )
    working_hours: WorkingHours = Field(default_factory=WorkingHours)
    catch_up_after_minutes: float = Field(
        5.0,
        gt=0,
        le=1440,
        description="events older than this when evaluated count as a catch-up (summarised)",
    )
