"""Triage of alerts in a tenant's database: acknowledged, snoozed until, resolved — by whom, when, with a note.

    alert_triage      the current state of each triaged alert (no row: nobody has looked at it yet)
    alert_triage_log  every change, oldest first: the history the alert's detail shows

What needs attention (the tray badge, the Alerts button, notifications) is an unread alert nobody has triaged,
and a snoozed alert whose snooze has ended: it comes back by itself, no timer has to fire. Acknowledging or
resolving also marks the alert read; a resolve is also queued for the destinations (`record_triage`). The states
are the triage side of values/alert_lifecycle.py; schema 8 creates the tables (alerts_schema.py `TRIAGE_SQL`).
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any, Final

from tenant_events.errors import StorageError
from tenant_events.store.alerts_schema import TRIAGE_SQL
from tenant_events.store.outbox_schema import enqueue
from tenant_events.store.schema import connect, rollback
from tenant_events.values.alert_lifecycle import Phase, after, phase_of, transition_of
from tenant_events.values.triage import NOTE_MAX, TRIAGE_STATES, Triage, TriageState, time_in_range

# Unread and untriaged (an 'open' entry is a reopened alert), or snoozed with the snooze over.
ATTENTION_SQL: Final = (
    "SELECT count(*) FROM alerts a LEFT JOIN alert_triage t ON t.alert_id = a.id"
    " WHERE (t.alert_id IS NULL AND a.read_at IS NULL) OR (t.state = 'open' AND a.read_at IS NULL)"
    " OR (t.state = 'snoozed' AND t.until <= ?)"
)


def ensure_triage(conn: sqlite3.Connection) -> None:
    """The triage tables (schema 8 has them; a file opened before its migration may not)."""
    for statement in TRIAGE_SQL.split(";"):
        if statement.strip():
            conn.execute(statement)


def has_triage(conn: sqlite3.Connection) -> bool:
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'alert_triage'"
    ).fetchone()
    return row is not None


def attention_count(conn: sqlite3.Connection, now: float) -> int:
    """Alerts that need someone: unread and untriaged, or back from a snooze (no triage table: the unread)."""
    if not has_triage(conn):
        return int(conn.execute("SELECT count(*) FROM alerts WHERE read_at IS NULL").fetchone()[0])
    return int(conn.execute(ATTENTION_SQL, (now,)).fetchone()[0])


def last_resolve(conn: sqlite3.Connection, alert_id: int) -> Triage | None:
    """The alert's latest resolve: who, when and why (its message to the destinations says so)."""
    if not has_triage(conn):
        return None
    row = conn.execute(
        "SELECT alert_id, state, by, at, until, note FROM alert_triage_log WHERE alert_id = ? AND state = 'resolved'"
        " ORDER BY at DESC, rowid DESC LIMIT 1",
        (alert_id,),
    ).fetchone()
    return _triage(row) if row else None


def _triage(row: tuple[Any, ...]) -> Triage:
    """A row (alert_id, state, by, at, until, note) of alert_triage or its log."""
    return Triage(int(row[0]), row[1], str(row[2]), float(row[3]), row[4], str(row[5]))


def check_triage(state: str, until: float | None, note: str, now: float) -> None:
    """ValueError naming the problem: an unknown state, a time no clock can show, a snooze that ends in the past,
    a note too long."""
    if state not in TRIAGE_STATES:
        raise ValueError(f"{state!r} is not a triage state ({', '.join(TRIAGE_STATES)})")
    if not time_in_range(now) or (until is not None and not time_in_range(until)):
        raise ValueError("its time is not one between 1970 and the year 9999")
    if state == "snoozed" and (until is None or until <= now):
        raise ValueError("a snooze needs an end in the future")
    if len(note) > NOTE_MAX:
        raise ValueError(f"the note is {len(note)} characters; at most {NOTE_MAX}")


def record_triage(
    conn: sqlite3.Connection, entry: Triage, *, deliver: bool = True, checked: bool = False
) -> bool:
    """Record `entry` inside the caller's write transaction (False: no such alert). Acknowledging or resolving
    marks the alert read, reopening unread; with `deliver`, a resolve of an alert that was not resolved is
    delivered to the destinations that want it (store/outbox_schema.py), in the same transaction. `checked`:
    NotAllowed (a ValueError) for a change the lifecycle does not make from the alert's phase (a resolved
    alert acknowledged: it must be reopened first); a teammate's change from the hub is kept as it was made."""
    ensure_triage(conn)
    found = conn.execute(
        "SELECT a.occurrences, t.state, t.until FROM alerts a LEFT JOIN alert_triage t ON t.alert_id = a.id"
        " WHERE a.id = ?",
        (entry.alert_id,),
    ).fetchone()
    if found is None:
        return False
    version, before = int(found[0]), phase_of(found[1], found[2], entry.at)
    if checked:
        after(before, transition_of(entry.state))
    conn.execute(
        "INSERT OR REPLACE INTO alert_triage (alert_id, state, by, at, until, note) VALUES (?,?,?,?,?,?)",
        (entry.alert_id, entry.state, entry.by, entry.at, entry.until, entry.note),
    )
    conn.execute(
        "INSERT INTO alert_triage_log (alert_id, at, state, by, until, note) VALUES (?,?,?,?,?,?)",
        (entry.alert_id, entry.at, entry.state, entry.by, entry.until, entry.note),
    )
    if entry.state in ("acknowledged", "resolved"):
        conn.execute(
            "UPDATE alerts SET read_at = ? WHERE id = ? AND read_at IS NULL", (entry.at, entry.alert_id)
        )
    elif entry.state == "open":
        conn.execute("UPDATE alerts SET read_at = NULL WHERE id = ?", (entry.alert_id,))
    resolves = before is not Phase.RESOLVED and after(before, transition_of(entry.state)) is Phase.RESOLVED
    if deliver and resolves:
        enqueue(conn, entry.alert_id, version, entry.at, "resolved")
    return True


class AlertTriage:
    """Triage reads and writes on one tenant database (its own connection)."""

    def __init__(self, path: Path) -> None:
        if not path.exists():
            raise FileNotFoundError(path)
        self.path = path
        try:
            self._conn = connect(path)
        except sqlite3.Error as exc:
            raise StorageError(f"cannot open the event database {path}: {exc}", "check the data dir") from exc

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> AlertTriage:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def set(
        self,
        alert_id: int,
        state: TriageState,
        by: str,
        note: str = "",
        until: float | None = None,
        at: float | None = None,
        *,
        mirrored: bool = False,
    ) -> Triage:
        """Record a change (last write wins; the log keeps every one). ValueError for a bad value or alert.
        `mirrored`: a teammate's change from the hub, kept as it was made (its snooze may be over already)."""
        now = time.time() if at is None else at
        check_triage(state, until if not mirrored else now + 1 if state == "snoozed" else None, note, now)
        entry = Triage(alert_id, state, by, now, until if state == "snoozed" else None, note)
        conn = self._conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                if not record_triage(conn, entry, checked=not mirrored):
                    raise ValueError(f"no alert {alert_id} in {self.path.stem}")
                conn.execute("COMMIT")
            except BaseException:
                rollback(conn)
                raise
        except sqlite3.OperationalError as exc:
            raise StorageError(f"cannot save the triage in {self.path}: {exc}", "free disk space") from exc
        return entry

    def find_alert(self, rule_id: str, first_event_id: str) -> int | None:
        """The local alert a team names by its rule and first event (hub/triage.py), if raised here yet."""
        row = self._conn.execute(
            "SELECT id FROM alerts WHERE rule_id = ? AND first_event_id = ? ORDER BY id LIMIT 1",
            (rule_id, first_event_id),
        ).fetchone()
        return int(row[0]) if row else None

    def has_entry(self, alert_id: int, by: str, at: float) -> bool:
        """Whether this change is already in the alert's history (a hub entry seen again after a restart)."""
        if not has_triage(self._conn):
            return False
        row = self._conn.execute(
            "SELECT 1 FROM alert_triage_log WHERE alert_id = ? AND by = ? AND at = ?", (alert_id, by, at)
        ).fetchone()
        return row is not None

    def alert_names(self, alert_id: int) -> tuple[str, str] | None:
        """(rule id, first event id) of a local alert: its name on the hub."""
        row = self._conn.execute(
            "SELECT rule_id, first_event_id FROM alerts WHERE id = ?", (alert_id,)
        ).fetchone()
        return (str(row[0]), str(row[1])) if row else None

    def states(self) -> dict[int, Triage]:
        """{alert id: its current triage} (alerts nobody triaged are absent)."""
        if not has_triage(self._conn):
            return {}
        rows = self._conn.execute("SELECT alert_id, state, by, at, until, note FROM alert_triage").fetchall()
        return {int(r[0]): _triage(r) for r in rows}

    def history(self, alert_id: int) -> list[Triage]:
        if not has_triage(self._conn):
            return []
        rows = self._conn.execute(
            "SELECT alert_id, state, by, at, until, note FROM alert_triage_log WHERE alert_id = ? ORDER BY at, rowid",
            (alert_id,),
        ).fetchall()
        return [_triage(r) for r in rows]

    def attention(self, now: float | None = None) -> int:
        return attention_count(self._conn, time.time() if now is None else now)

    def next_snooze_end(self, now: float | None = None) -> float | None:
        """When the next snoozed alert comes back (unix s), for a timer; None when none is snoozed."""
        if not has_triage(self._conn):
            return None
        row = self._conn.execute(
            "SELECT min(until) FROM alert_triage WHERE state = 'snoozed' AND until > ?",
            (time.time() if now is None else now,),
        ).fetchone()
        return float(row[0]) if row and row[0] is not None else None
