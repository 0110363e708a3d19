"""The alert inbox of one tenant database: list alerts by latest activity (the newest firing first), their
events, unread count, mark read.

Its own connection, never the writer's (like EventReader); marking read is a one-statement transaction that
waits for the writer's lock at most busy_timeout. Also reads stored events by time for trying a rule on
history (alerts/history.py). A database from before alerts existed (no `alerts` table yet) reads as empty.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path
from typing import Final

from tenant_events.errors import StorageError
from tenant_events.store.alert_records import RowSegment
from tenant_events.store.alert_triage import attention_count
from tenant_events.store.alerts_table import ALERT_COLUMNS, stored_alert
from tenant_events.store.connections import HeldConnection, HoldsConnection
from tenant_events.store.event_history import rows_by_time
from tenant_events.store.schema import connect
from tenant_events.values.alerts import StoredAlert

LIFECYCLE_SCHEMA: Final = 8  # the schema that gave alerts their life (store/schema.py)


def _inbox_connection(path: Path) -> sqlite3.Connection:
    conn = connect(path)
    conn.execute("PRAGMA cache_size = -2000")
    return conn


class AlertInbox(HoldsConnection):
    """Queries and read marks over one tenant's alerts; calls are serialised by a lock (one per thread is best)."""

    def __init__(self, path: Path) -> None:
        if not path.exists():
            raise FileNotFoundError(path)
        self.path = path
        try:  # the writer may have it closed and opened again (store/connections.py): read `_conn` under `_lock`
            self._held = HeldConnection(path, lambda: _inbox_connection(path))
        except sqlite3.DatabaseError as exc:  # locked, unreadable, or not a database at all
            raise StorageError(f"cannot open the event database {path}: {exc}", "check the data dir") from exc
        self._ready = False

    def close(self) -> None:
        self._held.close()

    def __enter__(self) -> AlertInbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _has_alerts(self) -> bool:
        """Whether the file has alerts as this version reads them (schema 8; an older file, which its writer has
        not migrated yet, reads as empty)."""
        if self._ready:
            return True
        row = self._conn.execute("PRAGMA user_version").fetchone()
        self._ready = int(row[0]) >= LIFECYCLE_SCHEMA
        return self._ready

    def alerts(
        self,
        *,
        since: float | None = None,
        unread_only: bool = False,
        limit: int = 200,
    ) -> list[StoredAlert]:
        """Alerts by latest activity, the one that fired last first (a firing folded into an old alert brings it
        to the top); `since` (unix s): only those raised or updated at or after it."""
        parts, params = ["1"], list[object]()
        if since is not None:
            parts.append("updated_at >= ?")
            params.append(since)
        if unread_only:
            parts.append("read_at IS NULL")
        with self._lock:
            if not self._has_alerts():
                return []
            rows = self._conn.execute(
                f"SELECT {ALERT_COLUMNS} FROM alerts WHERE {' AND '.join(parts)} ORDER BY fired_at DESC, id DESC LIMIT ?",  # noqa: S608
                [*params, limit],
            ).fetchall()
        return [stored_alert(r) for r in rows]

    def get(self, alert_id: int) -> StoredAlert | None:
        with self._lock:
            if not self._has_alerts():
                return None
            sql = f"SELECT {ALERT_COLUMNS} FROM alerts WHERE id = ?"  # noqa: S608
            row = self._conn.execute(sql, (alert_id,)).fetchone()
        return stored_alert(row) if row else None

    def team_alert_id(self, team_key: str) -> int | None:
        """The id of the team alert named `team_key` on the hub (store/team_alert_rows.py), if this file has it."""
        with self._lock:
            if not self._has_alerts():
                return None
            try:
                row = self._conn.execute(
                    "SELECT alert_id FROM team_alerts WHERE team_key = ?", (team_key,)
                ).fetchone()
            except sqlite3.OperationalError as exc:
                if "no such table" in str(exc):  # no team alert stored yet: the table comes with the first
                    return None
                raise StorageError(f"cannot read the team's alerts: {exc}", "try again") from exc
        return int(row[0]) if row else None

    def event_seqs(self, alert_id: int) -> list[int]:
        """The stored seqs of the events behind an alert, in stored order (at most MAX_ALERT_EVENTS)."""
        with self._lock:
            if not self._has_alerts():
                return []
            rows = self._conn.execute(
                "SELECT seq FROM alert_events WHERE alert_id = ? ORDER BY seq", (alert_id,)
            ).fetchall()
        return [int(r[0]) for r in rows]

    def unread_count(self) -> int:
        """Alerts that need someone: unread and not triaged, or back from a snooze (store/alert_triage.py)."""
        with self._lock:
            if not self._has_alerts():
                return 0
            return attention_count(self._conn, time.time())

    def mark_read(self, alert_ids: Sequence[int]) -> int:
        """Mark these alerts read; returns how many were unread."""
        if not alert_ids:
            return 0
        return self._mark(f"id IN ({','.join('?' * len(alert_ids))})", list(alert_ids))

    def mark_all_read(self, fired_upto: float | None = None) -> int:
        """Mark every alert read (that fired at or before `fired_upto`: what the user saw; one that fired again
        since stays unread); returns how many were unread."""
        if fired_upto is None:
            return self._mark("1", [])
        return self._mark("fired_at <= ?", [fired_upto])

    def _mark(self, where: str, params: list[object]) -> int:
        with self._lock:
            if not self._has_alerts():
                return 0
            try:
                return self._conn.execute(
                    f"UPDATE alerts SET read_at = ? WHERE read_at IS NULL AND {where}",  # noqa: S608
                    [time.time(), *params],
                ).rowcount
            except sqlite3.OperationalError as exc:
                raise StorageError(f"cannot mark alerts read in {self.path}: {exc}") from exc

    def history_rows(
        self, since_ms: int, until_ms: int, types: Collection[str] | None, raw_types: Collection[str]
    ) -> Iterator[RowSegment]:
        """Stored events that occurred in `since_ms <= time < until_ms`, archived and live, oldest first, a chunk
        per segment (event_history.py); the inbox is held until the last is read."""
        with self._lock:
            yield from rows_by_time(self._conn, self.path, since_ms, until_ms, types, raw_types)
