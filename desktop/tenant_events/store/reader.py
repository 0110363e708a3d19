"""Read API over one tenant database for the UI and the export (its own connection, never the writer's).

Newest-first paging for a lazy table model: `page(filter, offset, limit)` for small offsets and the keyset
variant `page_before(filter, before_seq, limit)` that stays fast at any depth of a 1M-row table. `seq` is the
stored order (monotonic), so "newest" means "stored last". All methods are synchronous and cheap; call them
from the UI thread or a worker, one reader per thread is best (calls are serialised by a lock).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from tenant_events.store.connections import HeldConnection, HoldsConnection
from tenant_events.store.query import Walk, fts_count_parts, walk_plan, where_clause
from tenant_events.store.records import CursorState, StoredGap, summary_of
from tenant_events.store.schema import connect
from tenant_events.values.events import EventFilter, StoredEvent, StoredRejected

_COLUMNS: Final = (
    "seq, event_id, stream_offset, type, family, time, source, tenant, purpose, summary, received_at,"
    " CASE WHEN summary IS NULL THEN raw END"
)
FAMILIES: Final = ("user", "organization", "group")
ALL_EVENTS: Final = EventFilter()
READER_CACHE_KIB: Final = 8000
_NO_SEQ: Final = 2**63 - 1  # above every seq


def _event(row: tuple[object, ...], raw: str | None = None) -> StoredEvent:
    """A StoredEvent from a `_COLUMNS` row; a row the indexer has not reached yet gets its summary made here."""
    values = list(row[:11])
    if values[9] is None:
        values[9] = summary_of(str(values[3]), str(row[11]))
    return StoredEvent(*values, raw=raw)  # type: ignore[arg-type, misc]


WIDE_SEQ_WINDOW: Final = 20_000  # rows: past this a count with a time bound walks the time index instead


def _reader_connection(path: Path) -> sqlite3.Connection:
    conn = connect(path, readonly=True)
    # A reader walks indexes and the FTS doclists once per query; a big page cache per connection (the
    # writer's 32 MB) only raised the app's RSS (two readers per tenant), not the speed of a filter.
    conn.execute(f"PRAGMA cache_size = -{READER_CACHE_KIB}")
    return conn


class EventReader(HoldsConnection):
    """Queries over stored events, rejected frames, gaps and the cursor."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # The writer may have it closed and opened again (store/connections.py): `_conn` is read under `_lock`.
        self._held = HeldConnection(path, lambda: _reader_connection(path))

    def close(self) -> None:
        self._held.close()

    def __enter__(self) -> EventReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _fts_upto(self) -> int:
        return int(self._conn.execute("SELECT value FROM counters WHERE name = 'fts_upto'").fetchone()[0])

    def _where(self, f: EventFilter) -> tuple[str, list[object]]:
        return where_clause(f, self._fts_upto())

    def count(
        self, f: EventFilter = ALL_EVENTS, min_seq: int | None = None, max_seq: int | None = None
    ) -> int:
        """Number of stored events matching `f` with `min_seq <= seq <= max_seq` (either bound optional).

        Count by seq range, never by seq arithmetic: seq has holes where a batch's duplicates used numbers up.
        """
        with self._lock:
            if (text := fts_count_parts(f)) is not None:
                return self._count_text(*text, min_seq, max_seq)
            where, params = self._where(f)
            # SQLite has no statistics to choose between the seq range (rowid) and the time index, and always takes
            # the seq range: a "last hour" count over all rows read the whole table (0.8-2.9 s at 1M rows). A
            # unary + hides seq from the planner when the window is wide and a time bound exists; a narrow
            # window (the live head's new rows) keeps the rowid range.
            seq = (
                "+seq"
                if (f.since or f.until) and self._seq_window(min_seq, max_seq) > WIDE_SEQ_WINDOW
                else "seq"
            )
            if min_seq is not None:
                where, params = f"{seq} >= ? AND {where}", [min_seq, *params]
            if max_seq is not None:
                where, params = f"{seq} <= ? AND {where}", [max_seq, *params]
            return int(self._conn.execute(f"SELECT count(*) FROM events WHERE {where}", params).fetchone()[0])  # noqa: S608

    def _seq_window(self, min_seq: int | None, max_seq: int | None) -> int:
        if max_seq is None:
            max_seq = int(self._conn.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()[0])
        return max_seq - (min_seq or 0)

    def _count_text(
        self, match: str, tail_where: tuple[str, list[object]], min_seq: int | None, max_seq: int | None
    ) -> int:
        """Text only: count in the FTS index itself plus the unindexed tail (~10× faster than looking up every
        matching row). One read transaction, so the indexer cannot move a row between the two counts."""
        low, high = min_seq if min_seq is not None else 0, max_seq if max_seq is not None else 2**63 - 1
        tail, tail_params = tail_where
        self._conn.execute("BEGIN")
        try:
            upto = self._fts_upto()
            indexed = self._conn.execute(
                "SELECT count(*) FROM events_fts WHERE events_fts MATCH ? AND rowid BETWEEN ? AND ?",
                (match, low, min(high, upto)),
            ).fetchone()[0]
            recent = self._conn.execute(
                f"SELECT count(*) FROM events WHERE seq BETWEEN ? AND ? AND {tail}",  # noqa: S608
                [max(low, upto + 1), high, *tail_params],
            ).fetchone()[0]
        finally:
            self._conn.execute("COMMIT")
        return int(indexed) + int(recent)

    def page(self, f: EventFilter = ALL_EVENTS, offset: int = 0, limit: int = 200) -> list[StoredEvent]:
        """Rows `offset..offset+limit` of the matching events, newest first."""
        with self._lock:
            where, params = where_clause(f, self._fts_upto(), narrow=False)
            rows = self._conn.execute(
                f"SELECT {_COLUMNS} FROM events WHERE {where} ORDER BY seq DESC LIMIT ? OFFSET ?",  # noqa: S608
                [*params, limit, offset],
            ).fetchall()
        return [_event(r) for r in rows]

    def page_before(self, f: EventFilter, before_seq: int | None, limit: int = 200) -> list[StoredEvent]:
        """Up to `limit` matching events stored before `before_seq` (None: the newest), newest first."""
        return self._walk(f, 0, before_seq if before_seq is not None else _NO_SEQ, limit, newest_first=True)

    def newer_than(self, f: EventFilter, after_seq: int, limit: int = 10_000) -> list[StoredEvent]:
        """Matching events stored after `after_seq`, oldest first (for appending a committed batch)."""
        return self._walk(f, after_seq, _NO_SEQ, limit, newest_first=False)

    def _walk(
        self, f: EventFilter, low: int, high: int, limit: int, newest_first: bool, raw: bool = False
    ) -> list[StoredEvent]:
        """Up to `limit` matching events with `low < seq < high`, in seq order either way. With free text or a
        query that gives an FTS expression, without building the set of all matches: the FTS index is walked by
        rowid (FTS5 streams `ORDER BY rowid`), each hit joined to its row and checked against the rest of the
        filter, stopping at `limit`; the unindexed tail (the newest rows) is scanned on its own. `raw`: with the
        stored JSON."""
        order = "DESC" if newest_first else "ASC"
        columns = f"{_COLUMNS}, raw" if raw else _COLUMNS
        with self._lock:
            self._conn.execute(
                "BEGIN"
            )  # one snapshot: the indexer may move the tail into the index meanwhile
            try:
                upto = self._fts_upto()
                plan = walk_plan(f, upto)
                if plan is None:
                    where, params = where_clause(f, upto, narrow=False)
                    rows = self._conn.execute(
                        f"SELECT {columns} FROM events WHERE seq > ? AND seq < ? AND {where}"  # noqa: S608
                        f" ORDER BY seq {order} LIMIT ?",
                        [low, high, *params, limit],
                    ).fetchall()
                elif newest_first:
                    rows = self._tail(plan, columns, max(low, upto), high, limit, order)
                    if len(rows) < limit:
                        rows += self._hits(plan, columns, low, min(high, upto + 1), limit - len(rows), order)
                else:
                    rows = self._hits(plan, columns, low, min(high, upto + 1), limit, order)
                    if len(rows) < limit:
                        rows += self._tail(plan, columns, max(low, upto), high, limit - len(rows), order)
            finally:
                self._conn.execute("COMMIT")
        return [_event(r[:-1], str(r[-1])) if raw else _event(r) for r in rows]

    def _tail(
        self, plan: Walk, columns: str, low: int, high: int, limit: int, order: str
    ) -> list[tuple[object, ...]]:
        where, params = plan.tail
        return self._conn.execute(
            f"SELECT {columns} FROM events WHERE seq > ? AND seq < ? AND {where} ORDER BY seq {order} LIMIT ?",  # noqa: S608
            [low, high, *params, limit],
        ).fetchall()

    def _hits(
        self, plan: Walk, columns: str, low: int, high: int, limit: int, order: str
    ) -> list[tuple[object, ...]]:
        if high <= low + 1:
            return []
        where, params = plan.rest
        return self._conn.execute(
            f"SELECT {columns} FROM (SELECT rowid AS hit FROM events_fts"  # noqa: S608
            f" WHERE events_fts MATCH ? AND rowid > ? AND rowid < ? ORDER BY rowid {order}) CROSS JOIN events"
            f" ON seq = hit WHERE {where} ORDER BY hit {order} LIMIT ?",
            [plan.match, low, high, *params, limit],
        ).fetchall()

    def seq_anchors(self, f: EventFilter, max_seq: int, every: int) -> list[int]:
        """The seq of every `every`-th matching row counted newest first from `max_seq` (rows 0, every, 2·every…):
        a table can then fetch any deep page by key instead of an OFFSET that walks every row above it."""
        if every <= 0:
            raise ValueError(f"every must be positive, got {every}")
        with self._lock:
            where, params = self._where(f)
            # all rows: walk the narrow (type, seq) index (it holds every seq) rather than the wide table b-tree
            source = "events INDEXED BY events_type_seq" if f == ALL_EVENTS else "events"
            extra = " AND type >= ''" if f == ALL_EVENTS else ""
            seq = "+seq" if f.since or f.until else "seq"  # a time bound: its index, not all rows (see count)
            rows = self._conn.execute(
                f"SELECT seq FROM (SELECT seq, row_number() OVER (ORDER BY {seq} DESC) AS r FROM {source}"  # noqa: S608
                f" WHERE {seq} <= ? AND {where}{extra}) WHERE (r - 1) % ? = 0 ORDER BY seq DESC",
                [max_seq, *params, every],
            ).fetchall()
        return [int(r[0]) for r in rows]

    def get(self, seq: int) -> StoredEvent | None:
        """One event by its stored seq, with its raw JSON, or None."""
        with self._lock:
            row = self._conn.execute(f"SELECT {_COLUMNS}, raw FROM events WHERE seq = ?", (seq,)).fetchone()  # noqa: S608
        return _event(row[:-1], row[-1]) if row else None

    def find(self, event_id: str) -> StoredEvent | None:
        """One event by its event id. No index has the id alone (schema.py _V2), so this reads the whole table:
        for tools and tests; the UI keeps seqs."""
        with self._lock:
            row = self._conn.execute(
                f"SELECT {_COLUMNS}, raw FROM events WHERE event_id = ? LIMIT 1",  # noqa: S608
                (event_id,),
            ).fetchone()
        return _event(row[:-1], row[-1]) if row else None

    def counts_by_type(self, f: EventFilter = ALL_EVENTS) -> dict[str, int]:
        with self._lock:
            where, params = self._where(f)
            # With a time bound, +type keeps SQLite from walking the whole (type, seq) index to group by it
            # (1.4 s at 1M rows for the last hour); the time index finds the rows, few when the range is short.
            group = "+type" if f.since or f.until else "type"
            rows = self._conn.execute(
                f"SELECT type, count(*) FROM events WHERE {where} GROUP BY {group}",  # noqa: S608
                params,
            ).fetchall()
        return {str(t): int(n) for t, n in rows}

    def histogram(self, f: EventFilter, bucket_seconds: int) -> list[tuple[int, dict[str, int]]]:
        """Events per time bucket stacked by family: [(bucket start as unix seconds, {family: count})], by time."""
        if bucket_seconds <= 0:
            raise ValueError(f"bucket_seconds must be positive, got {bucket_seconds}")
        size = bucket_seconds * 1000
        with self._lock:
            where, params = self._where(f)
            rows = self._conn.execute(
                f"SELECT (time_ms / ?) * ?, family, count(*) FROM events WHERE {where} GROUP BY 1, 2 ORDER BY 1",  # noqa: S608
                [size, size, *params],
            ).fetchall()
        out: dict[int, dict[str, int]] = {}
        for start, family, n in rows:
            out.setdefault(int(start) // 1000, dict.fromkeys(FAMILIES, 0))[str(family)] = int(n)
        return list(out.items())

    def cursor(self) -> CursorState:
        with self._lock:
            row = self._conn.execute(
                "SELECT stream_offset, last_event_time, updated_at FROM cursor"
            ).fetchone()
        return CursorState(offset=row[0], last_event_time=row[1], updated_at=row[2])

    def rejected(self, limit: int = 1000) -> list[StoredRejected]:
        """Rejected frames, newest first."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT id, received_at, event_name, stream_offset, reason, raw FROM rejected ORDER BY id DESC LIMIT ?",
                (limit,),
            ).fetchall()
        return [StoredRejected(*r) for r in rows]

    def rejected_count(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT count(*) FROM rejected").fetchone()[0])

    def gaps(self) -> list[StoredGap]:
        """Possible-gap markers, oldest first; `after_seq` is the last event stored before the gap."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT id, created_at, reason, resumed_from, lost_cursor, after_seq FROM gaps ORDER BY id"
            ).fetchall()
        return [StoredGap(*r) for r in rows]

    def duplicates_dropped(self) -> int:
        with self._lock:
            return int(
                self._conn.execute("SELECT value FROM counters WHERE name = 'duplicates'").fetchone()[0]
            )

    def range_raw(self, first_seq: int, last_seq: int) -> list[tuple[StoredEvent, str]]:
        """Events `first_seq..last_seq` (a CommitResult's range) with raw JSON, in stored order."""
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {_COLUMNS}, raw FROM events WHERE seq BETWEEN ? AND ? ORDER BY seq",  # noqa: S608
                (first_seq, last_seq),
            ).fetchall()
        return [(_event(r[:-1]), str(r[-1])) for r in rows]

    def export_iter(
        self, chunk: int = 5000, f: EventFilter = ALL_EVENTS
    ) -> Iterator[tuple[StoredEvent, str]]:
        """Every stored event matching `f` with its raw JSON, in stored order; reads in chunks so memory stays
        flat."""
        last = 0
        while f != ALL_EVENTS:
            found = self._walk(f, last, _NO_SEQ, chunk, newest_first=False, raw=True)
            for e in found:
                yield e, str(e.raw)
            if len(found) < chunk:
                return
            last = found[-1].seq
        while True:
            with self._lock:
                rows = self._conn.execute(
                    f"SELECT {_COLUMNS}, raw FROM events WHERE seq > ? ORDER BY seq LIMIT ?",  # noqa: S608
                    (last, chunk),
                ).fetchall()
            if not rows:
                return
            for r in rows:
                yield _event(r[:-1]), str(r[-1])
            last = int(rows[-1][0])


def open_reader(path: Path) -> EventReader:
    """A reader over `path`; the database must exist (open it with a StoreWriter first)."""
    if not path.exists():
        raise FileNotFoundError(path)
    try:
        return EventReader(path)
    except sqlite3.OperationalError as exc:
        from tenant_events.errors import StorageError

        raise StorageError(f"cannot read the event database {path}: {exc}") from exc
