"""The inbox's triage row for the selected alert: its state, who and when, the note, and what to do next.

    acknowledged by ana 14:02 — looking into it        (the history below, oldest first)
    [note ……………………………]  [Acknowledge] [Snooze 1 h] [Resolve] [Reopen]

Single-user triage is stored in the tenant's database (store/alert_triage.py) with
the login name as who. A problem (a note too long, a database that cannot be written) is shown under the note,
nothing is lost.
"""

from __future__ import annotations

import asyncio
import getpass
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from tenant_events.errors import StorageError
from tenant_events.store.alert_triage import AlertTriage
from tenant_events.tenant.deliveries import undelivered_in
from tenant_events.ui.alerts.alert_book import InboxEntry
from tenant_events.values.alert_lifecycle import after, allows, phase_of, transition_of
from tenant_events.values.triage import NOTE_MAX, SET_WORDS, Triage, TriageState, clock

SNOOZE_S: Final = 3600.0
log = logging.getLogger(__name__)


def triage_line(t: Triage) -> str:
    """ "acknowledged by ana 14:02 — looking into it" (a snooze says until when); control characters escaped."""
    text = f"{SET_WORDS.get(t.state, t.state)} by {t.by} {clock(t.at, '%H:%M')}"
    if t.until is not None:
        text += f" until {clock(t.until, '%H:%M')}"
    note = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in t.note)
    return f"{text} — {note}" if note else text


class TriageBar(QWidget):
    changed = Signal()  # a triage was saved: counts elsewhere change
    settled = Signal(str, int, str)  # profile, alert id, the triage state saved

    def __init__(self, database_file: Callable[[str], Path], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._database_file = database_file
        self.entry: InboxEntry | None = None
        self.who = getpass.getuser()
        # profile → its team's triage on the hub (tenant/team_triage.py), None for a tenant of one's own
        self.team: Callable[[str], Any] = lambda _profile: None
        self._publishing: set[asyncio.Future[None]] = set()
        self.state = QLabel("")
        self.state.setAccessibleName("Triage state")
        self.state.setWordWrap(True)
        self.note = QLineEdit()
        self.note.setMaxLength(NOTE_MAX)
        self.note.setPlaceholderText("a note for the record (optional)")
        self.note.setAccessibleName("Triage note")
        self.error = QLabel("")
        self.error.hide()
        self.buttons: dict[TriageState, QPushButton] = {}
        row = QHBoxLayout()
        row.addWidget(self.note, 1)
        for state, text in (
            ("acknowledged", "Ac&knowledge"),
            ("snoozed", "S&nooze 1 h"),
            ("resolved", "Resol&ve"),
            ("open", "Re&open"),
        ):
            button = QPushButton(text)
            button.setAutoDefault(False)
            button.clicked.connect(lambda _c=False, s=state: self.set_state(s))
            self.buttons[state] = button  # type: ignore[index]
            row.addWidget(button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.state)
        layout.addLayout(row)
        layout.addWidget(self.error)
        self.show_entry(None)

    def show_entry(self, entry: InboxEntry | None) -> None:
        self.entry = entry
        self.error.hide()
        if entry is None:
            for button in self.buttons.values():
                button.setEnabled(False)
            self.state.setText("")
            return
        history = self._history(entry)
        last = history[-1] if history else None
        phase = phase_of(last.state if last else None, last.until if last else None, time.time())
        for state, button in self.buttons.items():
            # what the alert's phase allows and what would change it (resolved: reopen first; no Reopen on an
            # alert that is firing, no Acknowledge on an acknowledged one)
            move = transition_of(state)
            button.setEnabled(allows(phase, move) and after(phase, move) is not phase)
        mark = "team · " if self.team(entry.profile) is not None else ""
        missed = self._undelivered(entry)
        if missed:
            mark = f"Undelivered to {', '.join(missed)} (given up after 24 h) · {mark}"
        if not history:
            self.state.setText(f"{mark}Nobody has triaged this alert yet.")
            return
        lines = [triage_line(t) for t in history]
        earlier = f"\nEarlier: {'; '.join(reversed(lines[:-1]))}" if len(lines) > 1 else ""
        self.state.setText(mark + lines[-1] + earlier)

    def _published(self, task: asyncio.Future[None]) -> None:
        self._publishing.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self.error.setText(f"Saved here, but not on the team hub: {task.exception()}")
            self.error.show()

    def _undelivered(self, entry: InboxEntry) -> list[str]:
        try:
            return undelivered_in(self._database_file(entry.profile)).get(entry.alert.id, [])
        except (StorageError, OSError) as exc:
            log.debug("undelivered marks not read: %s", exc)
            return []

    def _history(self, entry: InboxEntry) -> list[Triage]:
        try:
            with AlertTriage(self._database_file(entry.profile)) as triage:
                return triage.history(entry.alert.id)
        except (FileNotFoundError, StorageError):
            return []

    def set_state(self, state: TriageState) -> None:
        entry = self.entry
        if entry is None:
            return
        until = time.time() + SNOOZE_S if state == "snoozed" else None
        team = self.team(entry.profile)
        who = team.board.user if team is not None and team.board is not None else self.who
        note = self.note.text().strip()
        try:
            with AlertTriage(self._database_file(entry.profile)) as triage:
                made = triage.set(entry.alert.id, state, who, note, until)
        except (ValueError, StorageError, FileNotFoundError) as exc:
            self.error.setText(str(exc))
            self.error.show()
            return
        if team is not None:  # the team sees it too: under this hub user's own key
            task = asyncio.ensure_future(team.publish(entry.alert.id, state, note, until, made.at))
            self._publishing.add(task)
            task.add_done_callback(self._published)
        self.note.clear()
        self.show_entry(entry)
        self.settled.emit(entry.profile, entry.alert.id, state)
        self.changed.emit()
