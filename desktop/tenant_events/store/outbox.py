"""The alert outbox: what must still reach each alert destination, kept in the tenant's database.

    alerts commit, triage ──same transaction──▶ alert_outbox (alert id, kind, version, nth)
    delivery worker ──route──▶ alert_deliveries (one row per destination) ──send──▶ delivered | undelivered
    delivery worker ──repeats──▶ alert_deliveries (kind repeat), for an unacknowledged critical alert

`enqueue` runs inside AlertLedger.commit's transaction (a firing) or the triage's (a resolve), so an alert and
its outbox row exist together or not at all: a crash after the commit leaves the row for the next start, a crash
before it leaves neither. A version is the alert's firing count (values/alert_lifecycle.py): a new alert is
version 1, a firing folded into it later is a new version (one more delivery, with its own dedup key); more
events in the same firing are not. A version routed while an older one of the same alert is still pending for a
destination takes its place there (it says everything the older one would have), so a receiver that was down,
or a catch-up that grows an alert chunk by chunk, gets the alert once as it is now.

`destination_status` holds, per destination, why it was stopped (a 4xx that says the URL or token is wrong) and
for which URL (its fingerprint): a new URL lifts the stop and the pending deliveries go out.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from tenant_events.errors import StorageError
from tenant_events.store.alert_triage import last_resolve
from tenant_events.store.alerts_table import ALERT_COLUMNS, read_alerts, stored_alert
from tenant_events.store.connections import HeldConnection
from tenant_events.store.outbox_schema import ensure_outbox
from tenant_events.store.schema import connect, rollback
from tenant_events.values.alert_lifecycle import DeliveryKind, Phase, phase_of, repeat_due
from tenant_events.values.alerts import StoredAlert
from tenant_events.values.triage import Triage


@dataclass(frozen=True, slots=True)
class Delivery:
    """One kind of one alert version still to reach one destination."""

    alert_id: int
    version: int
    destination: str
    attempts: int
    queued_at: float
    next_at: float
    kind: DeliveryKind = "firing"
    nth: int = 0


@dataclass(frozen=True, slots=True)
class Unrouted:
    """An outbox row not yet turned into deliveries."""

    alert_id: int
    kind: DeliveryKind
    version: int
    nth: int
    queued_at: float


_KEY: Final = "alert_id = ? AND kind = ? AND version = ? AND nth = ? AND destination = ?"
_DELIVERY: Final = "alert_id, version, destination, attempts, queued_at, next_at, kind, nth"
REPEAT_HORIZON_S: Final = 7 * 86_400.0  # an alert last said longer ago than this is not repeated any more


def _delivery(row: tuple[Any, ...]) -> Delivery:
    a, v, d, n, q, t, k, nth = row
    return Delivery(int(a), int(v), str(d), int(n), float(q), float(t), k, int(nth))


def _key(d: Delivery) -> tuple[object, ...]:
    return (d.alert_id, d.kind, d.version, d.nth, d.destination)


@dataclass(frozen=True, slots=True)
class DestinationStatus:
    name: str
    fingerprint: str
    stopped_reason: str | None
    stopped_at: float | None
    last_ok_at: float | None
    last_error: str | None
    pending: int = 0
    undelivered: int = 0


class Outbox:
    """The delivery worker's own connection to a tenant database; every method is one short transaction."""

    def __init__(self, path: Path) -> None:
        try:  # the writer may have it closed and opened again (store/connections.py): call under `lock`
            self._held = HeldConnection(path, lambda: connect(path))
            self._write(ensure_outbox)
        except sqlite3.Error as exc:
            raise StorageError(f"cannot open the alert outbox in {path}: {exc}") from exc

    @property
    def lock(self) -> threading.RLock:
        """Held around each call (the delivery worker's `_call`), so the connection is never closed mid-query."""
        return self._held.lock

    @property
    def _conn(self) -> sqlite3.Connection:
        return self._held.conn

    def close(self) -> None:
        self._held.close()

    def _write(self, fn: object, *args: object) -> object:
        conn = self._conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                out = fn(conn, *args)  # type: ignore[operator]
                conn.execute("COMMIT")
                return out
            except BaseException:
                rollback(conn)
                raise
        except sqlite3.OperationalError as exc:
            raise StorageError(f"cannot update the alert outbox: {exc}", "free disk space") from exc

    def unrouted(self) -> list[Unrouted]:
        """Outbox rows not yet turned into deliveries, oldest first."""
        cur = self._conn.execute(
            "SELECT alert_id, kind, version, nth, queued_at FROM alert_outbox WHERE routed = 0"
            " ORDER BY alert_id, version, kind DESC"
        )
        return [Unrouted(int(a), k, int(v), int(n), float(q)) for a, k, v, n, q in cur]

    def received(self, alert_id: int) -> set[str]:
        """The destinations a firing of the alert was routed to (a resolve goes only where the alert went)."""
        cur = self._conn.execute(
            "SELECT DISTINCT destination FROM alert_deliveries WHERE alert_id = ? AND kind = 'firing'",
            (alert_id,),
        )
        return {str(r[0]) for r in cur}

    def route(self, rows: list[tuple[Unrouted, list[str], dict[str, float]]], now: float) -> None:
        """Turn outbox rows into a delivery per destination each (none: nothing to deliver), all in one
        transaction (a catch-up's grouped rule raises hundreds at once: the writer is not kept waiting for each);
        a firing takes the place of an older version of the alert still pending for the same destination."""

        def work(conn: sqlite3.Connection) -> None:
            for row, destinations, hold_until in rows:
                if row.kind == "firing":
                    conn.executemany(
                        "DELETE FROM alert_deliveries WHERE alert_id = ? AND destination = ?"
                        " AND state = 'pending' AND kind IN ('firing', 'repeat') AND version < ?",
                        [(row.alert_id, d, row.version) for d in destinations],
                    )
                key = (row.alert_id, row.kind, row.version, row.nth)
                conn.executemany(
                    "INSERT OR IGNORE INTO alert_deliveries (alert_id, kind, version, nth, destination, state,"
                    " queued_at, next_at) VALUES (?, ?, ?, ?, ?, 'pending', ?, ?)",
                    [(*key, d, row.queued_at, max(now, hold_until.get(d, now))) for d in destinations],
                )
                conn.execute(
                    "UPDATE alert_outbox SET routed = 1 WHERE alert_id = ? AND kind = ? AND version = ?"
                    " AND nth = ?",
                    key,
                )

        self._write(work)

    def alerts(self, ids: list[int]) -> dict[int, StoredAlert]:
        """The alerts with these ids (gone ones are absent)."""
        return read_alerts(self._conn, ids)

    def schedule_repeats(self, now: float, every: dict[str, float]) -> float | None:
        """Queue a repeat for each destination (`every`: name → seconds, 0 never) of each critical alert it was
        given that nobody has taken in hand (values/alert_lifecycle.py `repeat_due`); returns when the next one
        falls due (unix s), None when none can."""
        wanted = {d: s for d, s in every.items() if s > 0}
        if not wanted:
            return None
        rows = self._conn.execute(
            "SELECT d.alert_id, d.destination, max(d.delivered_at), a.occurrences, t.state, t.until,"
            " (SELECT coalesce(max(r.nth), 0) FROM alert_deliveries r WHERE r.alert_id = d.alert_id"
            "  AND r.destination = d.destination AND r.kind = 'repeat')"
            " FROM alert_deliveries d JOIN alerts a ON a.id = d.alert_id"
            " LEFT JOIN alert_triage t ON t.alert_id = d.alert_id"
            " WHERE d.state = 'delivered' AND d.kind IN ('firing', 'repeat') AND a.severity = 'critical'"
            " AND d.delivered_at > ? AND (t.state IS NULL OR t.state IN ('open', 'snoozed'))"
            " AND NOT EXISTS (SELECT 1 FROM alert_deliveries p WHERE p.alert_id = d.alert_id"
            "  AND p.destination = d.destination AND p.state = 'pending')"
            " GROUP BY d.alert_id, d.destination",
            (now - REPEAT_HORIZON_S,),
        ).fetchall()
        due: list[tuple[object, ...]] = []
        later: list[float] = []
        for alert_id, name, last, version, state, until, nth in rows:
            repeat_s = wanted.get(str(name))
            if repeat_s is None:
                continue
            phase = phase_of(state, until, now)
            if repeat_due(phase, "critical", float(last), repeat_s, now):
                due.append((int(alert_id), "repeat", int(version), int(nth) + 1, str(name), now, now))
            elif phase is Phase.FIRING:
                later.append(float(last) + repeat_s)
            elif until is not None:  # snoozed: it may be due when the snooze ends
                later.append(max(float(until), float(last) + repeat_s))
        if due:
            self._write(
                lambda c: c.executemany(
                    "INSERT OR IGNORE INTO alert_deliveries (alert_id, kind, version, nth, destination, state,"
                    " queued_at, next_at) VALUES (?, ?, ?, ?, ?, 'pending', ?, ?)",
                    due,
                )
            )
        return min(later) if later else None

    def due(self, now: float, stopped: set[str], limit: int = 200) -> list[Delivery]:
        """Pending deliveries whose time has come, oldest first (an alert's firing before its resolve), skipping
        stopped destinations."""
        cur = self._conn.execute(
            f"SELECT {_DELIVERY} FROM alert_deliveries"  # noqa: S608
            " WHERE state = 'pending' AND next_at <= ? ORDER BY next_at, alert_id, kind = 'resolved' LIMIT ?",
            (now, limit + len(stopped) * limit),
        )
        out = [_delivery(r) for r in cur]
        return [d for d in out if d.destination not in stopped][:limit]

    def next_due(self, stopped: set[str]) -> float | None:
        """When the next pending delivery (of a destination not stopped) is due, unix s."""
        marks = ",".join("?" * len(stopped))
        where = f" AND destination NOT IN ({marks})" if stopped else ""
        row = self._conn.execute(
            f"SELECT min(next_at) FROM alert_deliveries WHERE state = 'pending'{where}",  # noqa: S608
            tuple(stopped),
        ).fetchone()
        return float(row[0]) if row and row[0] is not None else None

    def delivered(self, d: Delivery, now: float) -> None:
        self.delivered_all([d], now)

    def delivered_all(self, ds: list[Delivery], now: float) -> None:
        """`ds` (one send's: an alert and the flood folded into it) delivered, in one transaction."""
        self._write(
            lambda c: (
                c.executemany(
                    "UPDATE alert_deliveries SET state = 'delivered', delivered_at = ?, attempts = attempts + 1,"  # noqa: S608
                    f" last_error = NULL WHERE {_KEY}",
                    [(now, *_key(d)) for d in ds],
                ),
                c.executemany(
                    "UPDATE destination_status SET last_ok_at = ?, last_error = NULL WHERE name = ?",
                    [(now, name) for name in dict.fromkeys(d.destination for d in ds)],
                ),
            )
        )

    def retry(self, d: Delivery, at: float, error: str, count: bool = True) -> None:
        """Try `d` again at `at`; `count` False for a hold that is no failure (quiet hours, a stopped URL)."""
        self._write(
            lambda c: c.execute(
                f"UPDATE alert_deliveries SET next_at = ?, attempts = attempts + ?, last_error = ? WHERE {_KEY}",  # noqa: S608
                (at, int(count), error, *_key(d)),
            )
        )

    def hold(
        self, name: str, fingerprint: str, failed: Delivery | None, at: float, error: str, now: float
    ) -> None:
        """Every delivery of `name` due by `now` waits until `at` with `error` (`failed`, the one just tried,
        counts an attempt; a held URL counts none), and the destination shows the error: one transaction for
        all of them, however many wait (a receiver down for an hour: each pass would otherwise be a write per
        delivery, competing with the store's writer)."""

        def work(conn: sqlite3.Connection) -> None:
            if failed is not None:
                conn.execute(
                    f"UPDATE alert_deliveries SET next_at = ?, attempts = attempts + 1, last_error = ? WHERE {_KEY}",  # noqa: S608
                    (at, error, *_key(failed)),
                )
            conn.execute(
                "UPDATE alert_deliveries SET next_at = ?, last_error = ?"
                " WHERE destination = ? AND state = 'pending' AND next_at <= ?",
                (at, error, name, now),
            )
            conn.execute(
                "INSERT INTO destination_status (name, fingerprint, last_error) VALUES (?, ?, ?)"
                " ON CONFLICT(name) DO UPDATE SET last_error = excluded.last_error",
                (name, fingerprint, error),
            )

        self._write(work)

    def give_up(self, d: Delivery, error: str) -> None:
        """`d` stays undelivered for good: the alert shows an "undelivered" mark."""
        self._write(
            lambda c: c.execute(
                f"UPDATE alert_deliveries SET state = 'undelivered', last_error = ? WHERE {_KEY}",  # noqa: S608
                (error, *_key(d)),
            )
        )

    def stop(self, name: str, fingerprint: str, reason: str, now: float) -> None:
        """Stop `name` (for this URL) until its URL changes; its deliveries stay pending."""
        self._write(
            lambda c: c.execute(
                "INSERT INTO destination_status (name, fingerprint, stopped_reason, stopped_at, last_error)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT(name) DO UPDATE SET fingerprint = excluded.fingerprint,"
                " stopped_reason = excluded.stopped_reason, stopped_at = excluded.stopped_at,"
                " last_error = excluded.last_error",
                (name, fingerprint, reason, now, reason),
            )
        )

    def stopped(self, current: dict[str, str]) -> dict[str, str]:
        """{name: reason} of destinations stopped for the URL they have now (`current`: name → fingerprint)."""
        rows = self._conn.execute(
            "SELECT name, fingerprint, stopped_reason FROM destination_status WHERE stopped_reason IS NOT NULL"
        ).fetchall()
        return {str(n): str(r) for n, f, r in rows if current.get(str(n)) == f}

    def resolution(self, alert_id: int) -> Triage | None:
        return last_resolve(self._conn, alert_id)

    def alert(self, alert_id: int) -> StoredAlert | None:
        row = self._conn.execute(
            f"SELECT {ALERT_COLUMNS} FROM alerts WHERE id = ?",  # noqa: S608
            (alert_id,),
        ).fetchone()
        return stored_alert(row) if row else None


def read_status(path: Path) -> list[DestinationStatus]:
    """Each destination's status in one tenant database (read-only; [] before any delivery)."""
    try:
        conn = connect(path, readonly=True)
    except sqlite3.Error:
        return []
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "destination_status" not in tables:
            return []
        counts: dict[tuple[str, str], int] = {
            (str(d), str(s)): int(n)
            for d, s, n in conn.execute(
                "SELECT destination, state, count(*) FROM alert_deliveries GROUP BY destination, state"
            )
        }
        names = {d for d, _ in counts}
        rows = {str(r[0]): r for r in conn.execute("SELECT * FROM destination_status")}
        out = []
        for name in sorted(names | set(rows)):
            r = rows.get(name, (name, "", None, None, None, None))
            out.append(
                DestinationStatus(
                    name,
                    str(r[1]),
                    r[2],
                    r[3],
                    r[4],
                    r[5],
                    counts.get((name, "pending"), 0),
                    counts.get((name, "undelivered"), 0),
                )
            )
        return out
    except sqlite3.Error:
        return []
    finally:
        conn.close()


def undelivered_alerts(conn: sqlite3.Connection) -> dict[int, list[str]]:
    """{alert id: destinations it never reached}: the "undelivered" mark (no outbox yet: none)."""
    try:
        cur = conn.execute(
            "SELECT alert_id, destination FROM alert_deliveries WHERE state = 'undelivered' ORDER BY destination"
        )
    except sqlite3.OperationalError:
        return {}
    out: dict[int, list[str]] = {}
    for alert_id, name in cur:
        out.setdefault(int(alert_id), []).append(str(name))
    return out


def read_undelivered(path: Path) -> dict[int, list[str]]:
    """`undelivered_alerts` of the database at `path`, read-only; {} when it cannot be read."""
    try:
        conn = connect(path, readonly=True)
    except sqlite3.Error:
        return {}
    try:
        return undelivered_alerts(conn)
    except sqlite3.Error:
        return {}
    finally:
        conn.close()
