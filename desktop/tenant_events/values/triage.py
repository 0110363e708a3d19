"""A triage state of one alert (acknowledged, snoozed until, resolved; open again), by whom, when, with a note.

The store keeps the states and their history (store/alert_triage.py); the inbox's triage bar and `tenant-events
triage` show and set them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Final, Literal

TriageState = Literal["acknowledged", "snoozed", "resolved", "open"]
TRIAGE_STATES: Final[tuple[TriageState, ...]] = ("acknowledged", "snoozed", "resolved", "open")
# how a history line says each state was set: "open" is a reopen
SET_WORDS: Final[dict[str, str]] = {"open": "reopened"}
NOTE_MAX: Final = 500
TIME_MAX: Final = 253_402_300_799.0  # 9999-12-31 23:59:59 UTC: the last moment a clock can show
SNOOZE_MAX_S: Final = 366 * 86_400.0  # a snooze longer than a year is a resolve


def time_in_range(seconds: float) -> bool:
    """Whether a triage time (unix s) is one a clock can show: from 1970 to the year 9999."""
    return 0.0 <= seconds <= TIME_MAX


def clock(seconds: float, form: str) -> str:
    """`seconds` in local time in the strftime `form`; never raises (a time out of range, from an older version's
    store, is said so)."""
    try:
        return datetime.fromtimestamp(seconds).strftime(form)
    except (OverflowError, OSError, ValueError):
        return "(a time out of range)"


@dataclass(frozen=True, slots=True)
class Triage:
    """One triage state (or one entry of its history)."""

    alert_id: int
    state: TriageState
    by: str
    at: float
    until: float | None = None
    note: str = ""

    def needs_attention(self, now: float) -> bool:
        return self.state == "open" or (self.state == "snoozed" and (self.until or 0) <= now)
