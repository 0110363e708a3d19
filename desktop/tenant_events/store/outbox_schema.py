"""The outbox tables (store/outbox.py), and the writes the alert commit and a triage make into them.

Kept apart from outbox.py so alerts_table.py and alert_triage.py can enqueue without importing the worker's
side. A delivery is one `kind` of one alert version to one destination (values/alert_lifecycle.py):

    firing     version n said (a raise is version 1, each firing folded in later one more)
    repeat     version n said again, `nth` time (an unacknowledged critical alert, every `repeat_minutes`)
    resolved   the alert is over (`nth`: its nth resolve, after a reopen); only to destinations that want it

Schema 8 created these tables in this shape (`migrate_outbox` rebuilds the first shape, which had no kinds);
`ensure_outbox` still creates them when missing, so an outbox opened by itself never fails.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Final

from tenant_events.values.alert_lifecycle import DeliveryKind

OUTBOX_SQL: Final = """
CREATE TABLE IF NOT EXISTS alert_outbox (
    alert_id  INTEGER NOT NULL,
    kind      TEXT NOT NULL DEFAULT 'firing' CHECK (kind IN ('firing', 'repeat', 'resolved')),
    version   INTEGER NOT NULL,
    nth       INTEGER NOT NULL DEFAULT 0,
    queued_at REAL NOT NULL,
    routed    INTEGER NOT NULL DEFAULT 0,  -- 1 once its alert_deliveries rows exist
    PRIMARY KEY (alert_id, kind, version, nth)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS alert_outbox_unrouted ON alert_outbox(alert_id) WHERE routed = 0;
CREATE TABLE IF NOT EXISTS alert_deliveries (
    alert_id     INTEGER NOT NULL,
    kind         TEXT NOT NULL DEFAULT 'firing' CHECK (kind IN ('firing', 'repeat', 'resolved')),
    version      INTEGER NOT NULL,
    nth          INTEGER NOT NULL DEFAULT 0,
    destination  TEXT NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'undelivered')),
    attempts     INTEGER NOT NULL DEFAULT 0,
    queued_at    REAL NOT NULL,
    next_at      REAL NOT NULL,  -- not before (backoff, Retry-After, quiet hours, a catch-up's hold)
    last_error   TEXT,
    delivered_at REAL,
    PRIMARY KEY (alert_id, kind, version, nth, destination)
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


def migrate_outbox(conn: sqlite3.Connection) -> None:
    """Schema 8: the outbox tables in their shape with kinds; a first-shape outbox (firings only) is carried
    over row by row as firings, inside the migration's transaction."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    old = {
        t
        for t in ("alert_outbox", "alert_deliveries")
        if t in tables and "kind" not in {str(c[1]) for c in conn.execute(f"PRAGMA table_info({t})")}
    }
    for table in old:
        conn.execute(f"ALTER TABLE {table} RENAME TO {table}_v1")
    for index in ("alert_outbox_unrouted", "alert_deliveries_due"):
        conn.execute(f"DROP INDEX IF EXISTS {index}")
    ensure_outbox(conn)
    if "alert_outbox" in old:
        conn.execute(
            "INSERT INTO alert_outbox (alert_id, version, queued_at, routed)"
            " SELECT alert_id, version, queued_at, routed FROM alert_outbox_v1"
        )
        conn.execute("DROP TABLE alert_outbox_v1")
    if "alert_deliveries" in old:
        conn.execute(
            "INSERT INTO alert_deliveries (alert_id, version, destination, state, attempts, queued_at, next_at,"
            " last_error, delivered_at) SELECT alert_id, version, destination, state, attempts, queued_at,"
            " next_at, last_error, delivered_at FROM alert_deliveries_v1"
        )
        conn.execute("DROP TABLE alert_deliveries_v1")


_ENQUEUE: Final = (
    "INSERT OR IGNORE INTO alert_outbox (alert_id, kind, version, nth, queued_at) VALUES (?, ?, ?, ?, ?)"
)


def enqueue(
    conn: sqlite3.Connection, alert_id: int, version: int, now: float, kind: DeliveryKind = "firing"
) -> None:
    """One more delivery of `alert_id` at `version` (a resolve: the next nth); call inside the transaction that
    writes the alert or its triage (schema 8 made the tables)."""
    nth = 0
    if kind == "resolved":
        row = conn.execute(
            "SELECT count(*) FROM alert_outbox WHERE alert_id = ? AND kind = 'resolved'", (alert_id,)
        ).fetchone()
        nth = int(row[0]) + 1
    conn.execute(_ENQUEUE, (alert_id, kind, version, nth, now))


def enqueue_firings(conn: sqlite3.Connection, firings: Iterable[tuple[int, int, float]]) -> None:
    """`enqueue` of many firings at once, each (alert id, version, now): one statement for a commit's alerts."""
    conn.executemany(_ENQUEUE, ((alert_id, "firing", version, 0, now) for alert_id, version, now in firings))
