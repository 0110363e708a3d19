"""A team relay's evaluation state, out of its database and back into another relay's: the alerts with their
versions and evidence, and where the evaluation stands in the hub's stream (hub/eval_state.py keeps it on the
hub).

    leader ─ step ─▶ carried(alert ids) ─▶ the hub ─▶ (takeover) ─▶ the new leader: adopt(state) on its writer

Events are named by (time ms, event id), the store's dedupe key, which every copy of the hub's stream shares;
seqs are each database's own. `adopt` makes the new leader's alert tables the team's: its own alerts of an
earlier term are set aside, the team's written with the events behind them, the watermark put at the team's
position, and each alert's current version queued for delivery again (the hub's outbox bucket says what was
delivered; destinations/worker.py sends only the rest).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from tenant_events.store.alert_rows import event_at
from tenant_events.store.alert_triage import record_triage
from tenant_events.store.alerts_table import insert_alert, read_alerts
from tenant_events.store.outbox_schema import enqueue
from tenant_events.store.schema import connect
from tenant_events.values.alert_lifecycle import Phase
from tenant_events.values.alerts import StoredAlert, iso_ms
from tenant_events.values.triage import Triage

CARRIED_EVENTS: Final = 200  # events behind an alert the hub keeps (the newest: what a restored window needs)
REDELIVER_S: Final = 3600.0  # an adopted alert that fired this recently is queued again (the bucket dedupes)
_TABLES: Final = (
    "alert_deliveries",
    "alert_outbox",
    "alert_triage",
    "alert_triage_log",
    "alert_events",
    "alerts",
)


@dataclass(frozen=True, slots=True)
class CarriedAlert:
    """One team alert as the hub keeps it: as its leader stored it, and the events behind it (time ms, id)."""

    alert: StoredAlert
    events: tuple[tuple[int, str], ...]


@dataclass(frozen=True, slots=True)
class TeamState:
    """Where the team's evaluation stands (its last event) and its alerts."""

    position: tuple[str, int]  # (event id, time ms)
    alerts: tuple[CarriedAlert, ...]


def carried(path: Path, ids: list[int]) -> list[CarriedAlert]:
    """The alerts with these ids and the newest CARRIED_EVENTS events behind each (read-only)."""
    if not ids:
        return []
    conn = connect(path, readonly=True)
    try:
        out = []
        for alert in read_alerts(conn, ids).values():
            events = conn.execute(
                "SELECT e.time_ms, e.event_id FROM alert_events a JOIN events e ON e.seq = a.seq"
                " WHERE a.alert_id = ? ORDER BY a.seq DESC LIMIT ?",
                (alert.id, CARRIED_EVENTS),
            ).fetchall()
            out.append(CarriedAlert(alert, tuple((int(t), str(e)) for t, e in reversed(events))))
        return out
    finally:
        conn.close()


def position_at(path: Path, seq: int) -> tuple[str, int] | None:
    """(event id, time ms) of the newest event at or before `seq` (read-only)."""
    conn = connect(path, readonly=True)
    try:
        return event_at(conn, seq)
    finally:
        conn.close()


def _seq(conn: sqlite3.Connection, time_ms: int, event_id: str) -> int | None:
    row = conn.execute(
        "SELECT seq FROM events WHERE time_ms = ? AND event_id = ?", (time_ms, event_id)
    ).fetchone()
    return int(row[0]) if row else None


def position_seq(conn: sqlite3.Connection, position: tuple[str, int]) -> int | None:
    """This database's seq of the team's position: its event, once stored here; when the hub no longer holds
    that event and this copy has gone past its time, the last event stored at or before it; else None (wait)."""
    event_id, time_ms = position
    found = _seq(conn, time_ms, event_id)
    if found is not None:
        return found
    newest = conn.execute("SELECT max(time_ms), min(time_ms) FROM events").fetchone()
    if newest is None or newest[0] is None or (newest[1] <= time_ms and newest[0] <= time_ms):
        return None  # not here yet
    row = conn.execute("SELECT max(seq) FROM events WHERE time_ms <= ?", (time_ms,)).fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def adopt(conn: sqlite3.Connection, state: TeamState, now: float) -> tuple[int, set[tuple[str, int]]] | None:
    """Make the team's state this database's, in the caller's write transaction: None while its position is not
    stored here yet; else the watermark it was put at, and (rule id, seq) of the events after it that an
    adopted alert already holds (the evaluator must not count them again: the leader may have saved an alert's
    newer version before its position)."""
    upto = position_seq(conn, state.position)
    if upto is None:
        return None
    for table in _TABLES:
        conn.execute(f"DELETE FROM {table}")  # noqa: S608 (constant names)
    spent_after: set[tuple[str, int]] = set()
    for item in state.alerts:
        a = item.alert
        seqs = [s for t, e in item.events if (s := _seq(conn, t, e)) is not None]
        first_ms = iso_ms(a.first_time)
        found = _seq(conn, first_ms, a.first_event_id) if first_ms is not None else None
        first = found or (seqs[0] if seqs else 0)
        last = seqs[-1] if seqs else first
        alert_id = insert_alert(conn, a, first, last)
        conn.executemany(
            "INSERT OR IGNORE INTO alert_events (alert_id, seq) VALUES (?, ?)", [(alert_id, s) for s in seqs]
        )
        spent_after.update((a.rule_id, s) for s in seqs if s > upto)
        recent = now - (a.fired_at or a.raised_at) < REDELIVER_S
        if recent:
            enqueue(conn, alert_id, a.occurrences, a.fired_at or a.raised_at)
        if a.phase(now) is not Phase.FIRING and a.triage is not None:
            entry = Triage(alert_id, a.triage, "team", a.updated_at, a.snoozed_until)  # type: ignore[arg-type]
            record_triage(conn, entry, deliver=recent)
    conn.execute("UPDATE counters SET value = ? WHERE name = 'alerts_upto'", (upto,))
    return upto, spent_after
