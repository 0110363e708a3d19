"""A triage state of one alert (acknowledged, snoozed until, resolved; open again), by whom, when, with a note.

The store keeps the states and their history (store/alert_triage.py); the inbox's triage bar and `tenant-events
triage` show and set them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

TriageState = Literal["acknowledged", "snoozed", "resolved", "open"]
TRIAGE_STATES: Final[tuple[TriageState, ...]] = ("acknowledged", "snoozed", "resolved", "open")
NOTE_MAX: Final = 500


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
