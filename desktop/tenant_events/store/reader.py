"""Read API over one tenant's events, both tiers, for the UI, the commands and the reports (its own connection,
never the writer's).

Newest-first paging for a lazy table model: `page(filter, offset, limit)` for small offsets and the keyset
variant `page_before(filter, before_seq, limit)` that stays fast at any depth. `seq` is the stored order
(monotonic), so "newest" means "stored last". All methods are synchronous; call them from the UI thread or a
worker, one reader per thread is best (calls are serialised by a lock).

Two tiers, one answer: events with seq <= `archived_upto` are in the archive's Parquet files, the rest in the
live table (archive_catalog.py). Each call reads the archive's catalog and the live rows in ONE read
transaction, then asks the archive (archive_reader.py) about that snapshot's files and puts the answers
together: the caller never picks a tier, and never sees an event twice or not at all while events move.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Final, TypeVar

from tenant_events.store import live_walk, team_view
from tenant_events.store.archive_alert_terms import alerts_named
from tenant_events.store.archive_catalog import ArchiveSnapshot
from tenant_events.store.archive_layout import folder_of
from tenant_events.store.archive_reader import ArchiveReader
from tenant_events.store.archive_source import ArchiveMoved
from tenant_events.store.connections import HeldConnection, HoldsConnection
from tenant_events.store.live_walk import COLUMNS as _COLUMNS
from tenant_events.store.live_walk import NO_LOW
from tenant_events.store.live_walk import NO_SEQ as _NO_SEQ
from tenant_events.store.live_walk import event_of as _event
from tenant_events.store.query import fts_count_parts, where_clause
from tenant_events.store.records import CursorState, StoredGap
from tenant_events.store.schema import connect
from tenant_events.values.events import EventFilter, StoredEvent, StoredRejected

FAMILIES: Final = ("user", "organization", "group")
ALL_EVENTS: Final = EventFilter()
READER_CACHE_KIB: Final = 8000
_RETRIES: Final = 3  # new snapshots tried when the archive's files changed under one
Alerts = Mapping[int, tuple[int, ...]]
T = TypeVar("T")


WIDE_SEQ_WINDOW: Final = 20_000  # rows: past this a count with a time bound walks the time index instead


def _reader_connection(path: Path) -> sqlite3.Connection:
    conn = connect(path, readonly=True)
    # A reader walks indexes and the FTS doclists once per query; a big page cache per connection (the
    # writer's 32 MB) only raised the app's RSS (two readers per tenant), not the speed of a filter.
    conn.execute(f"PRAGMA cache_size = -{READER_CACHE_KIB}")
    return conn


class EventReader(HoldsConnection):
    """Queries over stored events (both tiers), rejected frames, gaps and the cursor."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # The writer may have it closed and opened again (store/connections.py): `_conn` is read under `_lock`.
        self._held = HeldConnection(path, lambda: _reader_connection(path))
        self.archive = ArchiveReader(folder_of(path))

    def close(self) -> None:
        self._held.close()
        self.archive.close()

    def __enter__(self) -> EventReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- snapshots ------------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _snapshot(self, f: EventFilter = ALL_EVENTS) -> Iterator[tuple[ArchiveSnapshot, Alerts]]:
        """One read transaction (hold the lock): the archive's catalog, the events behind the alerts `f` names,
        and whatever the caller reads from the live table inside it."""
        self._conn.execute("BEGIN")
        try:
            snap = self.archive.use(team_view.snapshot(self._conn, self.archive.folder))
            alerts = alerts_named(self._conn, f) if snap.files else {}
            yield snap, alerts
        finally:
            self._conn.execute("COMMIT")

    def _retrying(self, read: Callable[[], T]) -> T:
        """`read()` again with a new snapshot when the archive's files changed under the old one."""
        for attempt in range(_RETRIES):
            try:
                return read()
            except ArchiveMoved:
                if attempt == _RETRIES - 1:
                    raise
        raise AssertionError("unreachable")

    def archived_upto(self) -> int:
        """The highest seq in the archive tier (0: none)."""
        with self._lock, self._snapshot() as (snap, _alerts):
            return snap.upto

    def archive_snapshot(self) -> ArchiveSnapshot:
        """The archive's catalog now (its files, for the disk each tier takes)."""
        with self._lock, self._snapshot() as (snap, _alerts):
            return snap

    # -- counts ---------------------------------------------------------------------------------------------
    def count(
        self, f: EventFilter = ALL_EVENTS, min_seq: int | None = None, max_seq: int | None = None
    ) -> int:
        """Number of stored events matching `f` with `min_seq <= seq <= max_seq` (either bound optional).

        Count by seq range, never by seq arithmetic: seq has holes where a batch's duplicates used numbers up.
        """
        return self._retrying(lambda: self._count(f, min_seq, max_seq))

    def _count(self, f: EventFilter, min_seq: int | None, max_seq: int | None) -> int:
        with self._lock, self._snapshot(f) as (snap, alerts):
            live = self._count_live(f, min_seq, max_seq, snap.upto)
        if not snap.files or (min_seq is not None and min_seq > snap.upto):
            return live
        return live + self.archive.count(snap, f, alerts, min_seq, max_seq)

    def _count_live(self, f: EventFilter, min_seq: int | None, max_seq: int | None, archived: int) -> int:
        if max_seq is not None and max_seq <= archived:
            return 0
        if (text := fts_count_parts(f)) is not None:
            low, high = min_seq if min_seq is not None else 0, max_seq if max_seq is not None else _NO_SEQ
            return live_walk.count_text(self._conn, *text, low, high, archived)
        where, params = where_clause(f, live_walk.fts_upto(self._conn))
        # SQLite has no statistics to choose between the seq range (rowid) and the time index, and always takes
        # the seq range: a "last hour" count over all rows read the whole table (0.8-2.9 s at 1M rows). A
        # unary + hides seq from the planner when the window is wide and a time bound exists; a narrow
        # window (the live head's new rows) keeps the rowid range.
        seq = (
            "+seq" if (f.since or f.until) and self._seq_window(min_seq, max_seq) > WIDE_SEQ_WINDOW else "seq"
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

    # -- pages ----------------------------------------------------------------------------------------------
    def page(self, f: EventFilter = ALL_EVENTS, offset: int = 0, limit: int = 200) -> list[StoredEvent]:
        """Rows `offset..offset+limit` of the matching events, newest first."""
        return self._retrying(lambda: self._page(f, offset, limit))

    def _page(self, f: EventFilter, offset: int, limit: int) -> list[StoredEvent]:
        with self._lock, self._snapshot(f) as (snap, alerts):
            where, params = where_clause(f, live_walk.fts_upto(self._conn), narrow=False)
            rows = self._conn.execute(
                f"SELECT {_COLUMNS} FROM events WHERE {where} ORDER BY seq DESC LIMIT ? OFFSET ?",  # noqa: S608
                [*params, limit, offset],
            ).fetchall()
            live = [_event(r) for r in rows]
            if len(live) == limit or not snap.files:
                return live
            # the archive's rows come after every live one: skip what the offset leaves of them
            skip = 0 if live else max(0, offset - self._count_live(f, None, None, snap.upto))
        return live + self.archive.walk(snap, f, alerts, NO_LOW, snap.upto + 1, limit - len(live), True, skip)

    def page_before(self, f: EventFilter, before_seq: int | None, limit: int = 200) -> list[StoredEvent]:
        """Up to `limit` matching events stored before `before_seq` (None: the newest), newest first."""
        return self._walk(
            f, NO_LOW, before_seq if before_seq is not None else _NO_SEQ, limit, newest_first=True
        )

    def newer_than(self, f: EventFilter, after_seq: int, limit: int = 10_000) -> list[StoredEvent]:
        """Matching events stored after `after_seq`, oldest first (for appending a committed batch)."""
        return self._walk(f, after_seq, _NO_SEQ, limit, newest_first=False)

    def _walk(
        self, f: EventFilter, low: int, high: int, limit: int, newest_first: bool, raw: bool = False
    ) -> list[StoredEvent]:
        """Up to `limit` matching events with `low < seq < high`, in seq order either way, both tiers."""
        return self._retrying(lambda: self._walk_once(f, low, high, limit, newest_first, raw))

    def _walk_once(
        self, f: EventFilter, low: int, high: int, limit: int, newest_first: bool, raw: bool
    ) -> list[StoredEvent]:
        with self._lock, self._snapshot(f) as (snap, alerts):
            upto = snap.upto
            live = (
                live_walk.walk(self._conn, f, max(low, upto), high, limit, newest_first, raw)
                if high > upto + 1
                else []
            )
        if not snap.files or low >= upto or (newest_first and len(live) == limit):
            return live
        if newest_first:
            return live + self.archive.walk(
                snap, f, alerts, low, min(high, upto + 1), limit - len(live), True, 0, raw
            )
        older = self.archive.walk(snap, f, alerts, low, min(high, upto + 1), limit, False, 0, raw)
        return (older + live)[:limit]

    def seq_anchors(self, f: EventFilter, max_seq: int, every: int) -> list[int]:
        """The seq of every `every`-th matching row counted newest first from `max_seq` (rows 0, every, 2·every…):
        a table can then fetch any deep page by key instead of an OFFSET that walks every row above it."""
        if every <= 0:
            raise ValueError(f"every must be positive, got {every}")
        return self._retrying(lambda: self._anchors(f, max_seq, every))

    def _anchors(self, f: EventFilter, max_seq: int, every: int) -> list[int]:
        with self._lock, self._snapshot(f) as (snap, alerts):
            where, params = where_clause(f, live_walk.fts_upto(self._conn))
            # all rows: walk the narrow (type, seq) index (it holds every seq) rather than the wide table b-tree
            source = "events INDEXED BY events_type_seq" if f == ALL_EVENTS else "events"
            extra = " AND type >= ''" if f == ALL_EVENTS else ""
            seq = "+seq" if f.since or f.until else "seq"  # a time bound: its index, not all rows (see count)
            rows = self._conn.execute(
                f"SELECT seq FROM (SELECT seq, row_number() OVER (ORDER BY {seq} DESC) AS r FROM {source}"  # noqa: S608
                f" WHERE {seq} <= ? AND {where}{extra}) WHERE (r - 1) % ? = 0 ORDER BY seq DESC",
                [max_seq, *params, every],
            ).fetchall()
            live = [int(r[0]) for r in rows]
            shown = self._count_live(f, None, max_seq, snap.upto) if snap.files and max_seq > snap.upto else 0
        if not snap.files:
            return live
        return live + self.archive.anchors(snap, f, alerts, min(max_seq, snap.upto), every, shown)

    # -- single events --------------------------------------------------------------------------------------
    def get(self, seq: int) -> StoredEvent | None:
        """One event by its stored seq, with its raw JSON, or None."""
        return self._retrying(lambda: self._get(seq))

    def _get(self, seq: int) -> StoredEvent | None:
        with self._lock, self._snapshot() as (snap, _alerts):
            if seq > snap.upto:
                row = self._conn.execute(
                    f"SELECT {_COLUMNS}, raw FROM events WHERE seq = ?",  # noqa: S608
                    (seq,),
                ).fetchone()
                return _event(row[:-1], row[-1]) if row else None
        return self.archive.get(snap, seq)

    def find(self, event_id: str) -> StoredEvent | None:
        """One event by its event id. No index has the id alone (schema.py _V2), so this reads the whole table:
        for tools and tests; the UI keeps seqs."""
        return self._retrying(lambda: self._find(event_id))

    def _find(self, event_id: str) -> StoredEvent | None:
        with self._lock, self._snapshot() as (snap, _alerts):
            row = self._conn.execute(
                f"SELECT {_COLUMNS}, raw FROM events WHERE event_id = ? LIMIT 1",  # noqa: S608
                (event_id,),
            ).fetchone()
        if row:
            return _event(row[:-1], row[-1])
        return self.archive.find(snap, event_id)

    # -- aggregates -----------------------------------------------------------------------------------------
    def counts_by_type(self, f: EventFilter = ALL_EVENTS) -> dict[str, int]:
        return self._retrying(lambda: self._counts_by_type(f))

    def _counts_by_type(self, f: EventFilter) -> dict[str, int]:
        with self._lock, self._snapshot(f) as (snap, alerts):
            where, params = where_clause(f, live_walk.fts_upto(self._conn))
            # With a time bound, +type keeps SQLite from walking the whole (type, seq) index to group by it
            # (1.4 s at 1M rows for the last hour); the time index finds the rows, few when the range is short.
            group = "+type" if f.since or f.until else "type"
            rows = self._conn.execute(
                f"SELECT type, count(*) FROM events WHERE {where} GROUP BY {group}",  # noqa: S608
                params,
            ).fetchall()
        total = {str(t): int(n) for t, n in rows}
        for kind, n in self.archive.counts_by_type(snap, f, alerts).items():
            total[kind] = total.get(kind, 0) + n
        return total

    def time_span(self, f: EventFilter = ALL_EVENTS) -> tuple[int, int] | None:
        """The earliest and the latest time (ms) of the matching events (None: none match), so a histogram over
        all of them is counted once at its bucket size instead of by the minute first (a year of minutes is
        millions of rows to bring into Python, holding every other thread)."""
        return self._retrying(lambda: self._time_span(f))

    def _time_span(self, f: EventFilter) -> tuple[int, int] | None:
        with self._lock, self._snapshot(f) as (snap, alerts):
            where, params = where_clause(f, live_walk.fts_upto(self._conn))
            row = self._conn.execute(
                f"SELECT min(time_ms), max(time_ms) FROM events WHERE {where}",  # noqa: S608
                params,
            ).fetchone()
        ends = [(int(row[0]), int(row[1]))] if row is not None and row[0] is not None else []
        if (archived := self.archive.time_span(snap, f, alerts)) is not None:
            ends.append(archived)
        if not ends:
            return None
        return min(a for a, _b in ends), max(b for _a, b in ends)

    def histogram(self, f: EventFilter, bucket_seconds: int) -> list[tuple[int, dict[str, int]]]:
        """Events per time bucket stacked by family: [(bucket start as unix seconds, {family: count})], by time."""
        if bucket_seconds <= 0:
            raise ValueError(f"bucket_seconds must be positive, got {bucket_seconds}")
        return self._retrying(lambda: self._histogram(f, bucket_seconds * 1000))

    def _histogram(self, f: EventFilter, size: int) -> list[tuple[int, dict[str, int]]]:
        with self._lock, self._snapshot(f) as (snap, alerts):
            where, params = where_clause(f, live_walk.fts_upto(self._conn))
            rows = self._conn.execute(
                f"SELECT (time_ms / ?) * ?, family, count(*) FROM events WHERE {where} GROUP BY 1, 2",  # noqa: S608
                [size, size, *params],
            ).fetchall()
        rows += self.archive.histogram(snap, f, alerts, size)
        out: dict[int, dict[str, int]] = {}
        for start, family, n in sorted(rows):
            bucket = out.setdefault(int(start) // 1000, dict.fromkeys(FAMILIES, 0))
            bucket[str(family)] = bucket.get(str(family), 0) + int(n)
        return list(out.items())

    # -- the rest of the database ---------------------------------------------------------------------------
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

    # -- with raw JSON ----------------------------------------------------------------------------------------
    def range_raw(self, first_seq: int, last_seq: int) -> list[tuple[StoredEvent, str]]:
        """Events `first_seq..last_seq` (a CommitResult's range) with raw JSON, in stored order."""
        return self._retrying(lambda: self._range_raw(first_seq, last_seq))

    def _range_raw(self, first_seq: int, last_seq: int) -> list[tuple[StoredEvent, str]]:
        with self._lock, self._snapshot() as (snap, _alerts):
            rows = self._conn.execute(
                f"SELECT {_COLUMNS}, raw FROM events WHERE seq BETWEEN ? AND ? ORDER BY seq",  # noqa: S608
                (max(first_seq, snap.upto + 1), last_seq),
            ).fetchall()
        live = [(_event(r[:-1]), str(r[-1])) for r in rows]
        if first_seq > snap.upto or not snap.files:
            return live
        return self.archive.range_raw(snap, first_seq, min(last_seq, snap.upto)) + live

    def export_iter(
        self, chunk: int = 5000, f: EventFilter = ALL_EVENTS
    ) -> Iterator[tuple[StoredEvent, str]]:
        """Every stored event matching `f` with its raw JSON, in stored order; reads in chunks so memory stays
        flat."""
        last = NO_LOW
        while True:
            found = self._walk(f, last, _NO_SEQ, chunk, newest_first=False, raw=True)
            for e in found:
                yield e, str(e.raw)
            if len(found) < chunk:
                return
            last = found[-1].seq


def open_reader(path: Path) -> EventReader:
    """A reader over `path`; the database must exist (open it with a StoreWriter first)."""
    if not path.exists():
        raise FileNotFoundError(path)
    try:
        return EventReader(path)
    except sqlite3.OperationalError as exc:
        from tenant_events.errors import StorageError

        raise StorageError(f"cannot read the event database {path}: {exc}") from exc
