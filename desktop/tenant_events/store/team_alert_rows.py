"""The team's alerts in a viewer's database: what the hub's relay raised, stored as the viewer's own alerts.

    team_alerts  alert id ─ the team's name of the alert (<rule>.<first event>) and the version last stored

A viewer whose hub has a relay evaluating for the team stores those alerts instead of evaluating its own
(tenant/team_feed.py): an alert arrives raised, then again each time it grows, and is written in place — the
inbox, the badge, the notifications and the team's triage (found by rule and first event) work on it as on any
alert. The rule's name carries the mark " (team)", so every place that names the alert shows where it came
from. The local events it spans are looked up by id and time; until the viewer has stored them, 0. The table is
created on first use, so older databases need no migration.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import orjson

from tenant_events.errors import StorageError
from tenant_events.store.alert_triage import ensure_triage, record_triage
from tenant_events.store.alerts_table import ALERT_COLUMNS, stored_alert
from tenant_events.store.connections import HeldConnection, HoldsConnection
from tenant_events.store.schema import connect, rollback
from tenant_events.values.alerts import Severity, StoredAlert, iso_ms
from tenant_events.values.triage import Triage

TEAM_MARK: Final = " (team)"
RELAY_WHO: Final = "the team's relay"
_TABLE: Final = """CREATE TABLE IF NOT EXISTS team_alerts (
    alert_id INTEGER PRIMARY KEY,
    team_key TEXT NOT NULL UNIQUE,
    version  INTEGER NOT NULL
)"""


@dataclass(frozen=True, slots=True)
class TeamAlertRow:
    """One team alert as the hub carries it (hub/team_alerts.py's payload, checked)."""

    key: str
    version: int
    rule_id: str
    rule_name: str
    severity: Severity
    tenant: str
    catch_up: bool
    occurrences: int
    event_count: int
    first_event_id: str
    last_event_id: str
    first_time: str
    last_time: str
    type_counts: dict[str, int]
    detail: str
    raised_at: float
    updated_at: float
    resolved: bool = False  # the relay resolved it (by going quiet, or someone's triage it heard of)
    fired_at: float = 0.0  # when it last fired, on the relay's clock (the inbox's order)


def _team_connection(path: Path) -> sqlite3.Connection:
    conn = connect(path)
    conn.execute(_TABLE)
    return conn


class TeamAlertStore(HoldsConnection):
    """Writes team alerts into one tenant database on a connection of its own (the writer's lock is shared). Each
    call holds `_lock`: the writer may close the connection between two of them (store/connections.py)."""

    def __init__(self, path: Path) -> None:
        try:
            self._held = HeldConnection(path, lambda: _team_connection(path))
        except sqlite3.Error as exc:
            raise StorageError(f"cannot store the team's alerts in {path}: {exc}") from exc

    def close(self) -> None:
        self._held.close()

    def __enter__(self) -> TeamAlertStore:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _seq(self, event_id: str, iso: str) -> int:
        ms = iso_ms(iso)
        if ms is None:
            return 0
        row = self._conn.execute(
            "SELECT seq FROM events WHERE time_ms = ? AND event_id = ?", (ms, event_id)
        ).fetchone()
        return int(row[0]) if row else 0

    def retire_own(self) -> int:
        """Delete the alerts this database's own rules raised, with their deliveries and triage: the team's relay
        evaluates the same events (all the hub holds), so its alerts take their place and the inbox does not show
        both. How many were deleted."""
        with self._lock:
            return self._retire_own(self._conn)

    def _retire_own(self, conn: sqlite3.Connection) -> int:
        own = "SELECT id FROM alerts WHERE id NOT IN (SELECT alert_id FROM team_alerts)"
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                for table in ("alert_deliveries", "alert_outbox", "alert_triage", "alert_triage_log"):
                    if table in tables:
                        conn.execute(f"DELETE FROM {table} WHERE alert_id IN ({own})")  # noqa: S608
                gone = conn.execute(f"DELETE FROM alerts WHERE id IN ({own})").rowcount  # noqa: S608
                conn.execute("COMMIT")
            except BaseException:
                rollback(conn)
                raise
        except sqlite3.Error as exc:
            raise StorageError(
                f"cannot set aside this computer's own alerts: {exc}", "free disk space"
            ) from exc
        return int(gone)

    def store(self, a: TeamAlertRow) -> tuple[StoredAlert, bool] | None:
        """Write `a`; (the alert as stored, True when new), None when this version and count are stored (with the
        same detail: a relay words a catch-up alert's latest event again once it knows the names in it, and
        resolved as it was: a resolve the relay made is recorded here as the team's triage, by RELAY_WHO)."""
        with self._lock:
            return self._store_one(self._conn, a)

    def _store_one(self, conn: sqlite3.Connection, a: TeamAlertRow) -> tuple[StoredAlert, bool] | None:
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                out = self._store(conn, a)
                conn.execute("COMMIT")
            except BaseException:
                rollback(conn)
                raise
        except sqlite3.Error as exc:
            raise StorageError(f"cannot store a team alert: {exc}", "free disk space") from exc
        return out

    def _store(self, conn: sqlite3.Connection, a: TeamAlertRow) -> tuple[StoredAlert, bool] | None:
        known = conn.execute(
            "SELECT t.alert_id, t.version, a.event_count, a.last_event_id, a.detail FROM team_alerts t"
            " JOIN alerts a ON a.id = t.alert_id WHERE t.team_key = ?",
            (a.key,),
        ).fetchone()
        first, last = self._seq(a.first_event_id, a.first_time), self._seq(a.last_event_id, a.last_time)
        types = orjson.dumps(a.type_counts).decode()
        last_ms = iso_ms(a.last_time) or 0
        if known is None:
            cur = conn.execute(
                "INSERT INTO alerts (rule_id, rule_name, severity, tenant, catch_up, notify, occurrences,"
                " event_count, first_seq, last_seq, first_event_id, last_event_id, first_time, last_time,"
                " last_time_ms, type_counts, detail, raised_at, updated_at, fired_at, raised_ms)"
                " VALUES (?,?,?,?,?,1,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    a.rule_id,
                    a.rule_name + TEAM_MARK,
                    a.severity,
                    a.tenant,
                    int(a.catch_up),
                    a.occurrences,
                    a.event_count,
                    first,
                    last,
                    a.first_event_id,
                    a.last_event_id,
                    a.first_time,
                    a.last_time,
                    last_ms,
                    types,
                    a.detail,
                    a.raised_at,
                    a.updated_at,
                    a.fired_at or a.raised_at,
                    last_ms,
                ),
            )
            alert_id, new = int(cur.lastrowid or 0), True
            conn.execute("INSERT INTO team_alerts VALUES (?, ?, ?)", (alert_id, a.key, a.version))
        else:
            alert_id, version, count = int(known[0]), int(known[1]), int(known[2])
            if version >= a.version and count >= a.event_count:
                same = (version, count, known[3]) == (a.version, a.event_count, a.last_event_id)
                resolves = a.resolved and self._resolve(conn, alert_id, a.updated_at)
                if not same or (known[4] == a.detail and not resolves):
                    return None
                conn.execute("UPDATE alerts SET detail = ? WHERE id = ?", (a.detail, alert_id))
                return self._stored(conn, alert_id), False
            refired = a.version > version
            conn.execute(
                "UPDATE alerts SET occurrences = ?, event_count = ?, last_seq = ?, last_event_id = ?,"
                " last_time = ?, last_time_ms = ?, type_counts = ?, detail = ?, updated_at = ?,"
                " fired_at = CASE WHEN ? THEN ? ELSE fired_at END,"
                " read_at = CASE WHEN ? THEN NULL ELSE read_at END WHERE id = ?",
                (
                    a.occurrences,
                    a.event_count,
                    last,
                    a.last_event_id,
                    a.last_time,
                    last_ms,
                    types,
                    a.detail,
                    a.updated_at,
                    int(refired),
                    a.fired_at or a.updated_at,
                    int(refired),
                    alert_id,
                ),
            )
            conn.execute(
                "UPDATE team_alerts SET version = ? WHERE alert_id = ?", (max(version, a.version), alert_id)
            )
            new = False
        if a.resolved:
            self._resolve(conn, alert_id, a.updated_at)
        return self._stored(conn, alert_id), new

    @staticmethod
    def _resolve(conn: sqlite3.Connection, alert_id: int, at: float) -> bool:
        """Record the relay's resolve unless the alert is resolved here already; whether it was recorded."""
        ensure_triage(conn)
        row = conn.execute("SELECT state FROM alert_triage WHERE alert_id = ?", (alert_id,)).fetchone()
        if row is not None and row[0] == "resolved":
            return False
        return record_triage(conn, Triage(alert_id, "resolved", RELAY_WHO, at), deliver=False)

    @staticmethod
    def _stored(conn: sqlite3.Connection, alert_id: int) -> StoredAlert:
        row = conn.execute(f"SELECT {ALERT_COLUMNS} FROM alerts WHERE id = ?", (alert_id,)).fetchone()  # noqa: S608
        return stored_alert(row)


def team_alert_ids(path: Path) -> set[int]:
    """The ids of the alerts in the database at `path` that came from the team's relay (read-only)."""
    try:
        conn = connect(path, readonly=True)
    except sqlite3.Error:
        return set()
    try:
        return {int(r[0]) for r in conn.execute("SELECT alert_id FROM team_alerts")}
    except sqlite3.Error:
        return set()
    finally:
        conn.close()
