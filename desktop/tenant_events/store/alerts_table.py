"""The alert rules' side of a tenant database: rows to evaluate, alerts to write.

The rules' own process calls `fn(AlertLedger(conn))` on its own connection (alert_connection.py), so the
evaluator reads exactly what is committed; `StoreWriter.run_alert_job(fn)` does the same on the writer thread
(`rules test`'s fixtures, tests). `commit` writes the alerts and moves the watermark (`counters.alerts_upto`)
in ONE transaction, and only if the watermark is still where the evaluator last read it (compare and set): a
crash, a restart or a second process on the same file can never have an event evaluated twice.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any, Final, TypeVar

import orjson

from tenant_events.errors import StorageError
from tenant_events.store import alert_rows, directory, timeline_query
from tenant_events.store.alert_records import AlertWrite, EvalRow, HeldLink, RowSegment
from tenant_events.store.alert_rows import event_at, segment_sql
from tenant_events.store.alert_triage import record_triage
from tenant_events.store.alerts_schema import ALERT_INSERT, ALERT_UPDATE
from tenant_events.store.directory import Rel
from tenant_events.store.entity_reader import DirectoryReader
from tenant_events.store.entity_state import holding_links
from tenant_events.store.outbox_schema import enqueue_firings
from tenant_events.store.records import summary_of
from tenant_events.store.schema import rollback
from tenant_events.values.alerts import Firing, StoredAlert
from tenant_events.values.triage import Triage

T = TypeVar("T")
MAX_ALERT_EVENTS: Final = 1000  # events linked to one alert; `event_count` keeps the true number
NAMES_CATCH_UP: Final = 5000  # events (~0.1 s): how far behind the directory may be caught up for a detail
READ_SEQS: Final = 1000  # seqs of rows read in one statement (one snapshot of the store, a few milliseconds)
_ACCESS_RELATIONS: Final = (Rel.GROUP_ROLE, Rel.ORG_GROUP_ROLE, Rel.ORG_MEMBER_ROLE, Rel.ORG_CONNECTION)

# (read from `alerts` by its own name: the last two columns are its current triage, values/alert_lifecycle.py)
ALERT_COLUMNS: Final = (
    "id, rule_id, rule_name, severity, tenant, catch_up, notify, occurrences, event_count, first_seq, last_seq,"
    " first_event_id, last_event_id, first_time, last_time, last_time_ms, type_counts, detail, raised_at,"
    " updated_at, read_at, fired_at, raised_ms, firing,"
    " (SELECT state FROM alert_triage WHERE alert_triage.alert_id = alerts.id),"
    " (SELECT until FROM alert_triage WHERE alert_triage.alert_id = alerts.id), group_key"
)


class WatermarkMoved(StorageError):
    """Another evaluator moved the watermark since this one read it; reload and go on from the stored one."""


def stored_alert(row: tuple[object, ...]) -> StoredAlert:
    """A StoredAlert from an `ALERT_COLUMNS` row."""
    values = list(row)
    values[5], values[6] = bool(values[5]), bool(values[6])
    values[16] = orjson.loads(str(values[16]))
    values[23] = Firing.from_json(orjson.loads(str(values[23]))) if values[23] else None
    return StoredAlert(*values)  # type: ignore[arg-type]  # column order is the dataclass's field order


def read_alerts(conn: sqlite3.Connection, ids: Collection[int]) -> dict[int, StoredAlert]:
    """The alerts with these ids as stored now (gone ones are absent)."""
    found: dict[int, StoredAlert] = {}
    wanted = list(ids)
    for start in range(0, len(wanted), 500):  # (SQLite's limit on host parameters, with room)
        part = wanted[start : start + 500]
        cur = conn.execute(
            f"SELECT {ALERT_COLUMNS} FROM alerts WHERE id IN ({','.join('?' * len(part))})",  # noqa: S608
            part,
        )
        found.update((a.id, a) for a in map(stored_alert, cur))
    return found


def insert_alert(conn: sqlite3.Connection, a: StoredAlert, first_seq: int, last_seq: int) -> int:
    """A copy of `a` as a new row of this database (its seqs are this database's own); its id."""
    row = (
        *(a.rule_id, a.rule_name, a.severity, a.tenant, int(a.catch_up), int(a.notify), a.occurrences),
        *(a.event_count, first_seq, last_seq, a.first_event_id, a.last_event_id, a.first_time, a.last_time),
        *(a.last_time_ms, orjson.dumps(a.type_counts).decode(), a.detail, firing_json(a.firing)),
        *(a.raised_at, a.updated_at, a.fired_at or a.raised_at, a.raised_ms or a.last_time_ms, a.group_key),
    )
    alert_id = conn.execute(ALERT_INSERT, row).lastrowid
    assert alert_id is not None
    if a.read_at is not None:
        conn.execute("UPDATE alerts SET read_at = ? WHERE id = ?", (a.read_at, alert_id))
    return int(alert_id)


def firing_json(firing: Firing | None) -> str:
    """The `firing` column's text."""
    return orjson.dumps(firing.as_json()).decode() if firing is not None else ""


class AlertLedger:
    """Reads and writes of the evaluator, on the connection it is given (the writer's)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

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
    ) -> list[RowSegment]:
        """Events with `after < seq <= upto` in stored order, only of `types` (all: None), raw JSON only for
        `raw_types`: the type prefilter is SQLite's, so rows no rule reads are never made into Python objects.
        Read READ_SEQS seqs a statement: each holds a snapshot only while its rows are fetched (alert_connection.py)."""
        sql, params = segment_sql("seq > ? AND seq <= ?", [0, 0], types, raw_types)
        at = len(raw_types)  # (where the two bounds stand among the parameters)
        rows: list[tuple[Any, ...]] = []
        for low in range(after, upto, READ_SEQS):
            params[at : at + 2] = [low, min(upto, low + READ_SEQS)]
            rows += self._conn.execute(sql, params).fetchall()
        return [(None, rows)]

    def history_start(self, since_ms: int) -> int | None:
        """The lowest seq of an event that occurred at or after `since_ms` (alert_rows.py)."""
        return alert_rows.history_start(self._conn, since_ms)

    def history(
        self, since: dict[int, list[str]], after: int, upto: int, raw_types: Collection[str]
    ) -> list[RowSegment]:
        """One span of the recent past the rules' state is refilled from after a restart (alert_rows.py)."""
        return [(None, alert_rows.history_span(self._conn, since, after, upto, raw_types))]

    def linked(self, segments: Iterable[RowSegment]) -> set[tuple[str, int]]:
        """(rule id, seq) of each of these rows that an alert already holds: restored windows and sequences do
        not count them towards a new firing."""
        bounds = [
            (first, first + len(rows) - 1) if first is not None else (rows[0][11], rows[-1][11])
            for first, rows in segments
            if rows
        ]
        if not bounds:
            return set()
        cur = self._conn.execute(
            "SELECT a.rule_id, e.seq FROM alert_events e JOIN alerts a ON a.id = e.alert_id"
            " WHERE e.seq BETWEEN ? AND ?",
            (min(b[0] for b in bounds), max(b[1] for b in bounds)),
        )
        return {(str(rule), int(seq)) for rule, seq in cur}

    def time_before(self, seq: int) -> int | None:
        """The event time (unix ms) of the newest stored event at or before `seq`."""
        found = self.position(seq)
        return found[1] if found else None

    def directory(self, *, refresh: bool = True) -> DirectoryReader:
        """The entity directory on this connection: an alert's detail names who and what (alerts/evaluator.py).

        With `refresh`, brought up to the newest stored event first when it is at most NAMES_CATCH_UP events
        behind (a reconnect's backlog, a burst bigger than a live batch, both left to the indexer): a live alert
        is notified with its names. A long catch-up is left alone, as the writer's throughput needs
        (store/directory.py)."""
        conn = self._conn
        top = self.newest_seq()
        behind = top - directory.watermark(conn)
        if refresh and 0 < behind <= NAMES_CATCH_UP:
            conn.execute("BEGIN IMMEDIATE")
            try:
                directory.catch_up(conn, top)
                conn.execute("COMMIT")
            except BaseException:
                rollback(conn)
                raise
        return DirectoryReader.on_connection(conn)

    def access_links(self) -> tuple[list[HeldLink], int]:
        """The links the rules' state checks start from after a restart (alerts/access_state.py), as the entity
        directory holds them now: organizations' connections and role links, each with its role's name and, for
        an organization's group, the group's organization; and the last seq the directory covers."""
        conn = self._conn
        conn.execute("BEGIN")  # one snapshot: the links and the watermark they hold at
        try:
            upto = directory.watermark(conn)
            found = {rel: holding_links(conn, rel) for rel in _ACCESS_RELATIONS}
            roles = dict(conn.execute("SELECT id, name FROM entities WHERE kind = 'role'").fetchall())
            orgs = dict(
                conn.execute(
                    "SELECT id, parent FROM entities WHERE kind = 'group' AND detail = 'organization'"
                ).fetchall()
            )
        finally:
            conn.execute("COMMIT")
        out: list[HeldLink] = []
        for rel, links in found.items():
            for a, b, c, added in links:
                role = None if rel is Rel.ORG_CONNECTION else roles.get(c or b)
                group = b if rel is Rel.ORG_GROUP_ROLE else a if rel is Rel.GROUP_ROLE else None
                out.append(HeldLink(rel, a, b, c, added, role, orgs.get(group) if group else None))
        return out, upto

    def earlier_object(self, row: EvalRow, data: Mapping[str, Any]) -> dict[str, Any] | None:
        """`data.object` of the newest event stored before `row` that created or updated the same user, group
        or organization (the update's "before", as the detail pane finds it); None when none is stored."""
        family, _, verb = row.type.rpartition(".")
        obj = data.get("object")
        if verb != "updated" or family not in ("user", "group", "organization") or not isinstance(obj, dict):
            return None
        ident = obj.get("user_id" if family == "user" else "id")
        if not isinstance(ident, str) or not ident:
            return None
        wanted = (f"{family}.created", f"{family}.updated")
        for ev in timeline_query.page(self._conn, family, ident, row.seq, 8):
            if ev.type in wanted and ev.raw:
                try:
                    before = orjson.loads(ev.raw)["event"]["data"]["object"]
                except (orjson.JSONDecodeError, KeyError, TypeError):
                    continue
                if isinstance(before, dict) and before.get("user_id" if family == "user" else "id") == ident:
                    return before
        return None

    def summary(self, seq: int) -> str | None:
        """The one-line summary of a stored event (the indexer's, or made now), None if it is gone."""
        row = self._conn.execute("SELECT type, summary, raw FROM events WHERE seq = ?", (seq,)).fetchone()
        if row is None:
            return None
        return str(row[1]) if row[1] is not None else summary_of(str(row[0]), str(row[2]))

    def rename(self, details: Mapping[int, tuple[int, str]]) -> set[int]:
        """Set alerts' details (alert id → (the seq it is said of, the text)) where the alert's latest event is
        still that seq; returns the ids changed."""
        conn = self._conn
        changed: set[int] = set()
        conn.execute("BEGIN IMMEDIATE")
        try:
            for alert_id, (seq, text) in details.items():
                cur = conn.execute(
                    "UPDATE alerts SET detail = ? WHERE id = ? AND last_seq = ?", (text, alert_id, seq)
                )
                if cur.rowcount:
                    changed.add(alert_id)
            conn.execute("COMMIT")
        except BaseException:
            rollback(conn)
            raise
        return changed

    def latest_alerts(self) -> list[StoredAlert]:
        """Each rule's newest alert (per group for a grouped rule: by its key, or by its name when stored before
        keys were kept): the ones a firing may fold into."""
        cur = self._conn.execute(
            f"SELECT {ALERT_COLUMNS} FROM alerts"  # noqa: S608
            " WHERE id IN (SELECT max(id) FROM alerts GROUP BY rule_id, group_key,"
            " CASE WHEN group_key = '' THEN rule_name END)"
        )
        return [stored_alert(r) for r in cur]

    def triage_since(self, after: int) -> tuple[list[tuple[int, str]], int]:
        """(alert id, state) of each triage change made after log row `after` (by anyone: the inbox, `triage`,
        a teammate mirrored from the hub, a resolve by quiet time), oldest first; and the newest row's id."""
        rows = self._conn.execute(
            "SELECT rowid, alert_id, state FROM alert_triage_log WHERE rowid > ? ORDER BY rowid", (after,)
        ).fetchall()
        return [(int(a), str(st)) for _r, a, st in rows], int(rows[-1][0]) if rows else after

    def newest_triage_row(self) -> int:
        row = self._conn.execute("SELECT max(rowid) FROM alert_triage_log").fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    def alerts_by_id(self, ids: Collection[int]) -> dict[int, StoredAlert]:
        """The alerts with these ids as stored now (read marks and triage included)."""
        return read_alerts(self._conn, ids)

    def unresolved_before(self, fired_before: float, rules: Collection[str]) -> list[StoredAlert]:
        """Alerts of these rules not resolved whose latest firing was before `fired_before` (wall clock): the
        ones that may resolve by going quiet."""
        marks = ",".join("?" * len(rules))
        cur = self._conn.execute(
            f"SELECT {ALERT_COLUMNS} FROM alerts WHERE fired_at < ? AND rule_id IN ({marks})"  # noqa: S608
            " AND id NOT IN (SELECT alert_id FROM alert_triage WHERE state = 'resolved')",
            (fired_before, *rules),
        )
        return [stored_alert(r) for r in cur]

    def resolve(self, entries: Iterable[Triage]) -> None:
        """Record resolves (by quiet time) in one transaction, each with its delivery."""
        self.in_transaction(lambda conn: [record_triage(conn, entry) for entry in entries])

    def in_transaction(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """`work(connection)` in one write transaction of its own (rolled back if it raises)."""
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            out = work(conn)
            conn.execute("COMMIT")
        except BaseException:
            rollback(conn)
            raise
        return out

    def position(self, seq: int) -> tuple[str, int] | None:
        """(event id, event time ms) of the newest stored event at or before `seq` (alert_rows.py)."""
        return event_at(self._conn, seq)

    def commit(self, writes: Iterable[AlertWrite], expected: int, watermark: int) -> list[int]:
        """Write the alerts and move the watermark from `expected` to `watermark`, in one transaction; returns
        each write's alert id in order. Raises WatermarkMoved (nothing written) if it was not at `expected`."""
        conn = self._conn
        ids: list[int] = []
        links: list[tuple[int, int]] = []
        firings: list[tuple[int, int, float]] = []
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
                    # the columns an insert and an update both write, in the order both statements name them
                    evidence = (
                        w.occurrences,
                        w.event_count,
                        w.first_seq,
                        w.last_seq,
                        w.first_event_id,
                        w.last_event_id,
                        w.first_time,
                        w.last_time,
                        w.last_time_ms,
                        orjson.dumps(w.type_counts).decode(),
                        w.detail,
                    )
                    fired_at = w.fired_at or w.raised_at
                    if w.alert_id is None:
                        head = (w.rule_id, w.rule_name, w.severity, w.tenant, int(w.catch_up), int(w.notify))
                        alert_id = conn.execute(
                            ALERT_INSERT,
                            (
                                *head,
                                *evidence,
                                firing_json(w.firing),
                                w.raised_at,
                                w.updated_at,
                                fired_at,
                                w.raised_ms or w.last_time_ms,
                                w.group_key,
                            ),
                        ).lastrowid
                        assert alert_id is not None
                    else:
                        alert_id = w.alert_id
                        conn.execute(
                            ALERT_UPDATE,
                            (
                                *evidence,
                                firing_json(w.firing),
                                w.updated_at,
                                fired_at,
                                int(w.reopen),
                                alert_id,
                            ),
                        )
                    if w.new_seqs:
                        links += [(alert_id, s) for s in w.new_seqs]
                    if w.alert_id is None or w.reopen:  # raised, or a new version: delivered (outbox.py)
                        firings.append((alert_id, w.occurrences, fired_at))
                    ids.append(alert_id)
                # every alert's links and deliveries in one statement each (their tables keep no order)
                if links:
                    conn.executemany(
                        "INSERT OR IGNORE INTO alert_events (alert_id, seq) VALUES (?, ?)", links
                    )
                if firings:
                    enqueue_firings(conn, firings)
                conn.execute("COMMIT")
            except BaseException:
                rollback(conn)
                raise
        except sqlite3.OperationalError as exc:
            raise StorageError(f"cannot write alerts to {_db_name(conn)}: {exc}", _hint(exc)) from exc
        return ids


def _db_name(conn: sqlite3.Connection) -> str:
    row = conn.execute("PRAGMA database_list").fetchone()
    return str(row[2]) if row and row[2] else "the event database"


def _hint(exc: sqlite3.OperationalError) -> str:
    """What to do: nothing, when another process held the write lock past the timeout (they retry)."""
    if exc.sqlite_errorcode in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return "the rules go on from their last stored alert"
    return "free disk space or check the data dir"
