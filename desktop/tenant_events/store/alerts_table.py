"""The alert rules' side of a tenant database, used on the writer thread: rows to evaluate, alerts to write.

`StoreWriter.run_alert_job(fn)` calls `fn(AlertLedger(conn))` between batches, so the evaluator reads exactly
what is committed and writes without waiting for the write lock. `commit` writes the alerts and moves the
watermark (`counters.alerts_upto`) in ONE transaction, and only if the watermark is still where the evaluator
last read it (compare and set): a crash, a restart or a second process on the same file can never have an
event evaluated twice.
"""

from __future__ import annotations

import sqlite3
from collections import deque
from collections.abc import Collection, Iterable
from typing import Final

import orjson

from tenant_events.errors import StorageError
from tenant_events.store.alert_records import AlertWrite, EvalRow, StoredAlert
from tenant_events.store.records import EventRow, summary_of
from tenant_events.store.schema import rollback

MAX_ALERT_EVENTS: Final = 1000  # events linked to one alert; `event_count` keeps the true number
RECENT_ROWS: Final = 4000  # rows of recent batches the writer keeps for the rules (~5 MB of raw JSON)

ALERT_COLUMNS: Final = (
    "id, rule_id, rule_name, severity, tenant, catch_up, notify, occurrences, event_count, first_seq, last_seq,"
    " first_event_id, last_event_id, first_time, last_time, last_time_ms, type_counts, detail, raised_at,"
    " updated_at, read_at"
)
_INSERT: Final = (
    "INSERT INTO alerts (rule_id, rule_name, severity, tenant, catch_up, notify, occurrences, event_count,"
    " first_seq, last_seq, first_event_id, last_event_id, first_time, last_time, last_time_ms, type_counts,"
    " detail, raised_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)
_UPDATE: Final = (
    "UPDATE alerts SET occurrences = ?, event_count = ?, first_seq = ?, last_seq = ?, first_event_id = ?,"
    " last_event_id = ?, first_time = ?, last_time = ?, last_time_ms = ?, type_counts = ?, detail = ?,"
    " updated_at = ?, read_at = CASE WHEN ? THEN NULL ELSE read_at END WHERE id = ?"
)


class WatermarkMoved(StorageError):
    """Another evaluator moved the watermark since this one read it; reload and go on from the stored one."""


def stored_alert(row: tuple[object, ...]) -> StoredAlert:
    """A StoredAlert from an `ALERT_COLUMNS` row."""
    values = list(row)
    values[5], values[6] = bool(values[5]), bool(values[6])
    values[16] = orjson.loads(str(values[16]))
    return StoredAlert(*values)  # type: ignore[arg-type]  # column order is the dataclass's field order


def eval_rows_sql(
    where: str,
    where_params: list[object],
    types: Collection[str] | None,
    raw_types: Collection[str],
    order: str = "seq",
) -> tuple[str, list[object]]:
    """SELECT of EvalRow columns under `where` (types: None = all), raw JSON only for `raw_types`; `order` is
    a constant ORDER BY list, never user text."""
    raw = f"CASE WHEN type IN ({','.join('?' * len(raw_types))}) THEN raw END" if raw_types else "NULL"
    sql = f"SELECT seq, event_id, type, time, time_ms, tenant, purpose, {raw} FROM events WHERE {where}"  # noqa: S608
    if types is not None:
        sql += f" AND type IN ({','.join('?' * len(types))})"
    return f"{sql} ORDER BY {order}", [*sorted(raw_types), *where_params, *sorted(types or ())]


class RecentRows:
    """The rows of the last few batches committed without duplicates, kept by the writer (its thread only).

    The rules evaluate each batch right after its commit; reading it back from the table cost ~1.4 µs a row (wide
    rows: about three to a page), more than all the rules together. A batch without a skipped duplicate holds
    consecutive seqs ending at the last inserted rowid, so its in-memory rows are exactly the committed rows.
    """

    def __init__(self, max_rows: int = RECENT_ROWS) -> None:
        self.max_rows = max_rows
        self._batches: deque[tuple[int, list[EventRow]]] = deque()
        self._rows = 0

    def add(self, first_seq: int, rows: list[EventRow]) -> None:
        self._batches.append((first_seq, rows))
        self._rows += len(rows)
        while self._rows > self.max_rows and len(self._batches) > 1:
            self._rows -= len(self._batches.popleft()[1])

    def rows(self, after: int, upto: int, types: Collection[str] | None) -> list[EvalRow] | None:
        """EvalRows (raw included) for every seq in `after < seq <= upto` of `types`, or None when a seq in that
        range is not held here (read the table instead)."""
        out: list[EvalRow] = []
        expect = after + 1
        new = tuple.__new__
        for first, rows in self._batches:
            if first + len(rows) <= expect:
                continue
            if first > expect:
                return None
            stop = min(len(rows), upto - first + 1)
            for i in range(expect - first, stop):
                e = rows[i]
                if (
                    types is None or e[2] in types
                ):  # EventRow: event_id, offset, type, family, time, time_ms, …
                    out.append(new(EvalRow, (first + i, e[0], e[2], e[4], e[5], e[7], e[8], e[10])))
            expect = first + stop
            if expect > upto:
                return out
        return out if expect > upto else None


class AlertLedger:
    """Reads and writes of the evaluator, on the connection it is given (the writer's)."""

    def __init__(self, conn: sqlite3.Connection, recent: RecentRows | None = None) -> None:
        self._conn = conn
        self._recent = recent

    def watermark(self) -> int:
        """The last seq the rules were evaluated over."""
        row = self._conn.execute("SELECT value FROM counters WHERE name = 'alerts_upto'").fetchone()
        return int(row[0])

    def newest_seq(self) -> int:
        """The highest seq ever given to an event (AUTOINCREMENT's high-water mark)."""
        row = self._conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'events'").fetchone()
        return int(row[0]) if row else 0

    def rows(
        self, after: int, upto: int, types: Collection[str] | None, raw_types: Collection[str]
    ) -> list[EvalRow]:
        """Events with `after < seq <= upto` (of `types`; None: all), in stored order."""
        if self._recent is not None:
            held = self._recent.rows(after, upto, types)
            if held is not None:
                return held
        sql, params = eval_rows_sql("seq > ? AND seq <= ?", [after, upto], types, raw_types)
        return [EvalRow(*r) for r in self._conn.execute(sql, params)]

    def rows_since(
        self, since_ms: int, upto: int, types: Collection[str] | None, raw_types: Collection[str]
    ) -> list[EvalRow]:
        """Events that occurred at or after `since_ms` with `seq <= upto`, in stored order: the recent past a
        threshold window is rebuilt from after a restart (the time index finds them)."""
        sql, params = eval_rows_sql("time_ms >= ? AND seq <= ?", [since_ms, upto], types, raw_types)
        return [EvalRow(*r) for r in self._conn.execute(sql, params)]

    def time_before(self, seq: int) -> int | None:
        """The event time (unix ms) of the newest stored event at or before `seq`."""
        row = self._conn.execute(
            "SELECT time_ms FROM events WHERE seq <= ? ORDER BY seq DESC LIMIT 1", (seq,)
        ).fetchone()
        return int(row[0]) if row else None

    def summary(self, seq: int) -> str | None:
        """The one-line summary of a stored event (the indexer's, or made now), None if it is gone."""
        row = self._conn.execute("SELECT type, summary, raw FROM events WHERE seq = ?", (seq,)).fetchone()
        if row is None:
            return None
        return str(row[1]) if row[1] is not None else summary_of(str(row[0]), str(row[2]))

    def latest_alerts(self) -> list[StoredAlert]:
        """Each rule's newest alert: the one a new firing may fold into."""
        cur = self._conn.execute(
            f"SELECT {ALERT_COLUMNS} FROM alerts WHERE id IN (SELECT max(id) FROM alerts GROUP BY rule_id)"  # noqa: S608
        )
        return [stored_alert(r) for r in cur]

    def commit(self, writes: Iterable[AlertWrite], expected: int, watermark: int) -> list[int]:
        """Write the alerts and move the watermark from `expected` to `watermark`, in one transaction; returns
        each write's alert id in order. Raises WatermarkMoved (nothing written) if it was not at `expected`."""
        conn = self._conn
        ids: list[int] = []
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                moved = conn.execute(
                    "UPDATE counters SET value = ? WHERE name = 'alerts_upto' AND value = ?",
                    (watermark, expected),
                ).rowcount
                if moved != 1:
                    raise WatermarkMoved(
                        f"the alert watermark of {_db_name(conn)} moved under this evaluator"
                    )
                for w in writes:
                    counts = orjson.dumps(w.type_counts).decode()
                    if w.alert_id is None:
                        alert_id = conn.execute(
                            _INSERT,
                            (w.rule_id, w.rule_name, w.severity, w.tenant, int(w.catch_up), int(w.notify),
                             w.occurrences, w.event_count, w.first_seq, w.last_seq, w.first_event_id,
                             w.last_event_id, w.first_time, w.last_time, w.last_time_ms, counts, w.detail,
                             w.raised_at, w.updated_at),
                        ).lastrowid  # fmt: skip
                        assert alert_id is not None
                    else:
                        alert_id = w.alert_id
                        conn.execute(
                            _UPDATE,
                            (w.occurrences, w.event_count, w.first_seq, w.last_seq, w.first_event_id,
                             w.last_event_id, w.first_time, w.last_time, w.last_time_ms, counts, w.detail,
                             w.updated_at, int(w.reopen), alert_id),
                        )  # fmt: skip
                    if w.new_seqs:
                        conn.executemany(
                            "INSERT OR IGNORE INTO alert_events (alert_id, seq) VALUES (?, ?)",
                            [(alert_id, s) for s in w.new_seqs],
                        )
                    ids.append(alert_id)
                conn.execute("COMMIT")
            except BaseException:
                rollback(conn)
                raise
        except sqlite3.OperationalError as exc:
            raise StorageError(
                f"cannot write alerts to {_db_name(conn)}: {exc}", "free disk space or check the data dir"
            ) from exc
        return ids


def _db_name(conn: sqlite3.Connection) -> str:
    row = conn.execute("PRAGMA database_list").fetchone()
    return str(row[2]) if row and row[2] else "the event database"
