"""The alert tables' migration script: kept apart from schema.py so it can be renumbered without editing it.

schema.py appends `ALERTS_SQL` to its ordered MIGRATIONS. What it creates:

  alerts        one row per alert a rule raised (alerts/evaluator.py); a burst or a catch-up folds into one
                row (`occurrences` firings, `event_count` events), so the row is updated while it stays open
  alert_events  the seqs of the events behind an alert (capped per alert, see alerts_table.MAX_ALERT_EVENTS)
  counters      row `alerts_upto`: the last seq the rules were evaluated over. It is written in the same
                transaction as the alerts it produced, so an event is evaluated exactly once

An existing database starts its watermark at its newest seq: history stored before alert rules existed is not
turned into a flood of alerts on the first start (trying a rule on that history is alerts/history.py's job).
"""

from __future__ import annotations

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
