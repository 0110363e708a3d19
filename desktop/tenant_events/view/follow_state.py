"""Whether the event table follows the newest events: one state machine for every way the reader moves the view.

    ┌──────── row picked (click, J/K, a notification's event) · scrolled away from the top · F ────────┐
    │                                                                                                   ▼
   LIVE ◀── pill · N · F · scrolled back to the top with no row picked · a new filter keeping no row ── READING
    ▲  │
    │  └── a filter or zoom whose range ended in the past (from any state) ──▶ PAST
    └───── a filter whose range reaches now (READING instead when the row being read is kept) ◀─ PAST

LIVE is what "Follow" means: the newest rows are in view and no row is picked, so there is nothing to keep in
place; new rows scroll in, and while the window is looked at nothing counts as new (a reader at the newest end has
read the channel, as in Slack). The one pause: while the pointer is on the rows (`held`), nothing moves under it;
the rows wait above (the pill counts them) and come into view when the pointer leaves. Following a window looked
at, they are not "new" for the title and the tray meanwhile: the reader is at the newest end, and the pill says
they wait; only a window not looked at counts them. READING keeps every row on
screen at its pixel while rows go in above; the rows the reader has not had on screen stay new. PAST is a view
that nothing new can enter (a zoom or custom range that ended): Follow is off there and says why, N only goes to
the range's newest row.

The window (ui/window/table/follow.py) feeds this the facts and carries out the `Moves` it answers; nothing here
knows Qt, so every transition is tested on its own (tests/view/test_follow_state.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Final


class Mode(Enum):
    LIVE = "live"
    READING = "reading"
    PAST = "past"


PAST_SAY: Final = "This time range has ended: no new events arrive in it. Reset the zoom (Ctrl+0) to follow."


@dataclass(frozen=True, slots=True)
class Moves:
    """What the window does after a transition."""

    to_top: bool = False  # scroll to the newest row
    unpick: bool = False  # no current or selected row (LIVE never has one)
    all_seen: bool = False  # every row counted as new is seen now
    keep_place: bool = False  # rows went in above: shift the view by them, every row on screen stays put
    say: str = ""  # a line for the user (a toast)


STAY: Final = Moves()


class FollowState:
    """The mode, and the two facts besides it that decide what a new row does: whether the window is looked at
    (shown, not minimized, active) and whether the pointer holds the rows."""

    def __init__(self) -> None:
        self.mode = Mode.LIVE
        self.looking = False
        self.held = False

    @property
    def following(self) -> bool:
        return self.mode is Mode.LIVE

    def _live(self, to_top: bool = True, unpick: bool = True) -> Moves:
        self.mode = Mode.LIVE
        return Moves(to_top=to_top, unpick=unpick, all_seen=self.looking and not self.held)

    # -- the reader's commands -----------------------------------------------------------------------------
    def jump(self) -> Moves:
        """The pill or N: the newest rows, followed (in a past range only its newest row: nothing to follow)."""
        if self.mode is Mode.PAST:
            return Moves(to_top=True)
        return self._live()

    def toggle(self) -> Moves:
        """F: Follow off where it is, or on (as N) from reading; in a past range it says why it cannot."""
        if self.mode is Mode.LIVE:
            self.mode = Mode.READING
            return STAY
        if self.mode is Mode.READING:
            return self._live()
        return Moves(say=PAST_SAY)

    def picked(self) -> Moves:
        """A row became the one being read (a click, J/K, Down from the search, a notification's event)."""
        if self.mode is Mode.LIVE:
            self.mode = Mode.READING
        return STAY

    def scrolled(self, at_top: bool, picked: bool) -> Moves:
        """The user moved the view (wheel, scroll bar, keys): away from the newest stops following; back to the
        newest with no row picked follows again (as a log viewer's tail does)."""
        if self.mode is Mode.LIVE and not at_top:
            self.mode = Mode.READING
        elif self.mode is Mode.READING and at_top and not picked:
            return self._live(to_top=False, unpick=False)
        return STAY

    def reset(self, range_open: bool, kept: bool) -> Moves:
        """A new filter, zoom or tenant: other rows, none of them new. A range that ended is PAST; a row still
        matching the one being read is READING (the window selects it again); else the newest, followed."""
        if not range_open:
            self.mode = Mode.PAST
            return Moves(to_top=not kept)
        if kept:
            self.mode = Mode.READING
            return STAY
        return self._live(unpick=False)  # the reset itself left no row picked

    # -- the window's facts --------------------------------------------------------------------------------
    def look(self, looking: bool) -> Moves:
        """The window was shown, activated, hidden, minimized or left for another window."""
        was, self.looking = self.looking, looking
        if looking and not was and self.mode is Mode.LIVE:
            return Moves(to_top=not self.held, all_seen=True)  # (held: nothing moves under the pointer)
        return STAY

    def hold(self, held: bool) -> Moves:
        """The pointer came onto the rows (or a button went down there), or left them."""
        was, self.held = self.held, held
        if was and not held and self.mode is Mode.LIVE:
            return Moves(to_top=True, all_seen=self.looking)
        return STAY

    def arrived(self) -> Moves:
        """New rows went in at the top."""
        if self.mode is Mode.LIVE:
            return Moves(to_top=not self.held, keep_place=self.held, all_seen=self.looking)
        return Moves(keep_place=True)
