"""The alert tables' migration script: kept apart from schema.py so it can be renumbered without editing it.

schema.py appends `ALERTS_SQL` to its ordered MIGRATIONS. What it creates:

  alerts        one row per alert a rule raised (alerts/evaluator.py); a burst or a catch-up folds into one
                row (`occurrences` firings, `event_count` events), so the row is updated while it stays open
  alert_events  the seqs of the events behind an alert (capped per alert, see alerts_table.MAX_ALERT_EVENTS)
  counters      row `alerts_upto`: the last seq the rules were evaluated over. It is written in the same
                transaction as the alerts it produced, so an event is evaluated exactly once

Schema 8 (`TRIAGE_SQL`, then `add_lifecycle` and store/outbox_schema.py's `migrate_outbox`) gives each alert its life
(values/alert_lifecycle.py): `fired_at` (wall clock of its latest firing: the inbox's order), `raised_ms` (event
time of the firing that raised it: the coalescing bound counts from there), `firing` (JSON: the latest
firing's evidence, values/alerts.py `Firing`) and `group_key` (a grouped rule's group: two groups may share a
name, and a restart must find each one's alert); the triage tables exist from then on (store/alert_triage.py), so
an alert's phase is read with it.

An existing database starts its watermark at its newest seq: history stored before alert rules existed is not
turned into a flood of alerts on the first start (trying a rule on that history is alerts/history.py's job).
"""

from __future__ import annotations

import sqlite3
from typing import Final

ALERTS_SQL: Final = """
CREATE TABLE alerts (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    rule_id        TEXT NOT NULL,
    rule_name      TEXT NOT NULL,
    severity       TEXT NOT NULL CHECK (severity IN ('info', 'warning', 'critical')),
    tenant         TEXT NOT NULL,
    catch_up       INTEGER NOT NULL,
    notify         INTEGER NOT NULL,
    occurrences    INTEGER NOT NULL,
    event_count    INTEGER NOT NULL,
    first_seq      INTEGER NOT NULL,
    last_seq       INTEGER NOT NULL,
    first_event_id TEXT NOT NULL,
    last_event_id  TEXT NOT NULL,
    first_time     TEXT NOT NULL,
    last_time      TEXT NOT NULL,
    last_time_ms   INTEGER NOT NULL,
    type_counts    TEXT NOT NULL,  -- JSON object {event type: events}
    detail         TEXT NOT NULL,  -- one line about the latest event behind it
    raised_at      REAL NOT NULL,
    updated_at     REAL NOT NULL,
    read_at        REAL
);
CREATE INDEX alerts_rule ON alerts(rule_id, id);
CREATE INDEX alerts_unread ON alerts(id) WHERE read_at IS NULL;
CREATE TABLE alert_events (
    alert_id INTEGER NOT NULL REFERENCES alerts(id) ON DELETE CASCADE,
    seq      INTEGER NOT NULL,
    PRIMARY KEY (alert_id, seq)
) WITHOUT ROWID;
INSERT INTO counters (name, value)
    SELECT 'alerts_upto', coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0);
"""

TRIAGE_SQL: Final = """
CREATE TABLE IF NOT EXISTS alert_triage (
    alert_id INTEGER PRIMARY KEY,
    state    TEXT NOT NULL CHECK (state IN ('acknowledged', 'snoozed', 'resolved', 'open')),
    by       TEXT NOT NULL,
    at       REAL NOT NULL,
    until    REAL,  -- snoozed until (unix s)
    note     TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS alert_triage_log (
    alert_id INTEGER NOT NULL,
    at       REAL NOT NULL,
    state    TEXT NOT NULL,
    by       TEXT NOT NULL,
    until    REAL,
    note     TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS alert_triage_log_alert ON alert_triage_log(alert_id, at);
"""
LIFECYCLE_COLUMNS: Final = (
    ("fired_at", "REAL NOT NULL DEFAULT 0"),
    ("raised_ms", "INTEGER NOT NULL DEFAULT 0"),
    ("firing", "TEXT NOT NULL DEFAULT ''"),
    ("group_key", "TEXT NOT NULL DEFAULT ''"),
)


def add_lifecycle(conn: sqlite3.Connection) -> None:
    """Schema 8's columns on `alerts` (those it lacks: a step run again changes nothing), each older alert's
    latest firing taken as its last update, and the index the inbox's order reads."""
    have = {str(r[1]) for r in conn.execute("PRAGMA table_info(alerts)")}
    missing = [(name, kind) for name, kind in LIFECYCLE_COLUMNS if name not in have]
    for name, kind in missing:
        conn.execute(f"ALTER TABLE alerts ADD COLUMN {name} {kind}")
    if missing:
        conn.execute("UPDATE alerts SET fired_at = updated_at, raised_ms = last_time_ms WHERE fired_at = 0")
    conn.execute("CREATE INDEX IF NOT EXISTS alerts_fired ON alerts(fired_at)")


# an alert's row written by the rules (alerts_table.py `commit`): a new one, and a firing folded into it
ALERT_INSERT: Final = (
    "INSERT INTO alerts (rule_id, rule_name, severity, tenant, catch_up, notify, occurrences, event_count,"
    " first_seq, last_seq, first_event_id, last_event_id, first_time, last_time, last_time_ms, type_counts,"
    " detail, firing, raised_at, updated_at, fired_at, raised_ms, group_key)"
    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)
ALERT_UPDATE: Final = (
    "UPDATE alerts SET occurrences = ?, event_count = ?, first_seq = ?, last_seq = ?, first_event_id = ?,"
    " last_event_id = ?, first_time = ?, last_time = ?, last_time_ms = ?, type_counts = ?, detail = ?,"
    " firing = ?, updated_at = ?, fired_at = ?, read_at = CASE WHEN ? THEN NULL ELSE read_at END WHERE id = ?"
)
