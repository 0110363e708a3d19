"""The outbox tables (store/outbox.py), and the one write the alert commit makes into them.

Kept apart from outbox.py so alerts_table.py can enqueue without importing the worker's side.
"""

from __future__ import annotations

import sqlite3
from typing import Final

OUTBOX_SQL: Final = """
CREATE TABLE IF NOT EXISTS alert_outbox (
    alert_id  INTEGER NOT NULL,
    version   INTEGER NOT NULL,
    queued_at REAL NOT NULL,
    routed    INTEGER NOT NULL DEFAULT 0,  -- 1 once its alert_deliveries rows exist
    PRIMARY KEY (alert_id, version)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS alert_outbox_unrouted ON alert_outbox(alert_id) WHERE routed = 0;
CREATE TABLE IF NOT EXISTS alert_deliveries (
    alert_id     INTEGER NOT NULL,
    version      INTEGER NOT NULL,
    destination  TEXT NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'undelivered')),
    attempts     INTEGER NOT NULL DEFAULT 0,
    queued_at    REAL NOT NULL,
    next_at      REAL NOT NULL,  -- not before (backoff, Retry-After, quiet hours)
    last_error   TEXT,
    delivered_at REAL,
    PRIMARY KEY (alert_id, version, destination)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS alert_deliveries_due ON alert_deliveries(next_at) WHERE state = 'pending';
CREATE TABLE IF NOT EXISTS destination_status (
    name           TEXT PRIMARY KEY,
    fingerprint    TEXT NOT NULL,  -- of the URL the stop is about
    stopped_reason TEXT,
    stopped_at     REAL,
    last_ok_at     REAL,
    last_error     TEXT
) WITHOUT ROWID;
"""


def ensure_outbox(conn: sqlite3.Connection) -> None:
    """Create the outbox tables if missing; inside the caller's transaction (executescript would commit it)."""
    for statement in OUTBOX_SQL.split(";"):
        if statement.strip():
            conn.execute(statement)


def enqueue(conn: sqlite3.Connection, alert_id: int, version: int, now: float) -> None:
    """One more delivery of `alert_id` at `version`; call inside the transaction that writes the alert."""
    ensure_outbox(conn)
    conn.execute(
        "INSERT OR IGNORE INTO alert_outbox (alert_id, version, queued_at) VALUES (?, ?, ?)",
        (alert_id, version, now),
    )
