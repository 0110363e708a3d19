"""One view over several tenants' databases, ordered by event time ("All tenants"), paged without loading them.

Order: (event time, tenant, stored seq), newest first; a page is a keyset position in that order, so every page
costs the same at any depth. Each store answers "my next `limit` rows before this position" from its
(time_ms, event_id) index (schema.py _V2), newest first; a k-way merge keeps the first `limit` of them. Filters
are the single store's (`EventFilter`, query.py). Counts, per-type counts and the histogram add up each store's.

A tenant is the name of its database (the profile name), so two profiles of one tenant stay apart.
"""

from __future__ import annotations

import heapq
import sqlite3
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Final

from tenant_events.store.query import where_clause
from tenant_events.store.reader import _COLUMNS, EventReader, _event
from tenant_events.store.records import EventFilter, StoredEvent
from tenant_events.store.schema import connect

_MAX_SEQ: Final = 2**63 - 1
# A type filter matching fewer rows than this reads them through the (type, seq) index and sorts them by time;
# a commoner one walks the time index and skips the rest (without statistics SQLite always takes the type index,
# and sorting a third of a million-row table for one page took seconds).
FEW_ROWS: Final = 20_000


@dataclass(frozen=True, slots=True, order=True)
class MergedKey:
    """A position in the merged order: event time (unix ms), tenant, stored seq."""

    time_ms: int
    tenant: str
    seq: int


@dataclass(frozen=True, slots=True)
class MergedEvent:
    tenant: str
    time_ms: int
    event: StoredEvent

    @property
    def key(self) -> MergedKey:
        return MergedKey(self.time_ms, self.tenant, self.event.seq)


class _TimePager:
    """One store's rows in time order (its own read connection, serialised by a lock)."""

    def __init__(self, tenant: str, path: Path) -> None:
        self.tenant = tenant
        self._conn = connect(path, readonly=True)
        self._conn.execute("PRAGMA cache_size = -4000")
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def _seq_bound(self, key: MergedKey) -> int:
        """Within the key's millisecond, which of this store's seqs come after the key (newest-first order)."""
        if self.tenant == key.tenant:
            return key.seq
        return _MAX_SEQ if self.tenant < key.tenant else 0

    def _source(self, f: EventFilter) -> str:
        """`events`, or `events INDEXED BY events_time_id` when walking time order is the cheaper plan."""
        if f.text.strip():
            return "events"  # the full-text matches drive the query
        if f.types:
            marks = ",".join("?" * len(f.types))
            few = self._conn.execute(
                f"SELECT count(*) FROM (SELECT 1 FROM events WHERE type IN ({marks}) LIMIT ?)",  # noqa: S608
                [*sorted(f.types), FEW_ROWS],
            ).fetchone()[0]
            if few < FEW_ROWS:
                return "events"
        return "events INDEXED BY events_time_id"

    def before(self, f: EventFilter, key: MergedKey | None, limit: int) -> list[MergedEvent]:
        with self._lock:
            upto = int(self._conn.execute("SELECT value FROM counters WHERE name = 'fts_upto'").fetchone()[0])
            where, params = where_clause(f, upto)
            if key is not None:
                where = f"time_ms <= ? AND (time_ms < ? OR seq < ?) AND {where}"
                params = [key.time_ms, key.time_ms, self._seq_bound(key), *params]
            rows = self._conn.execute(
                f"SELECT {_COLUMNS}, time_ms FROM {self._source(f)} WHERE {where}"  # noqa: S608
                " ORDER BY time_ms DESC, seq DESC LIMIT ?",
                [*params, limit],
            ).fetchall()
        return [MergedEvent(self.tenant, int(r[-1]), _event(r[:-1])) for r in rows]

    def after(self, f: EventFilter, key: MergedKey, limit: int) -> list[MergedEvent]:
        # oldest first: within the key's millisecond, a later tenant's rows all come after it, an earlier one's none
        bound = key.seq if self.tenant == key.tenant else (0 if self.tenant > key.tenant else _MAX_SEQ)
        with self._lock:
            upto = int(self._conn.execute("SELECT value FROM counters WHERE name = 'fts_upto'").fetchone()[0])
            where, params = where_clause(f, upto)
            rows = self._conn.execute(
                f"SELECT {_COLUMNS}, time_ms FROM {self._source(f)}"  # noqa: S608
                f" WHERE time_ms >= ? AND (time_ms > ? OR seq > ?) AND {where} ORDER BY time_ms, seq LIMIT ?",
                [key.time_ms, key.time_ms, bound, *params, limit],
            ).fetchall()
        return [MergedEvent(self.tenant, int(r[-1]), _event(r[:-1])) for r in rows]


class MergedReader:
    """Pages, counts and histograms over several tenant databases (`{tenant: path}`); close when done."""

    def __init__(self, stores: Mapping[str, Path]) -> None:
        self._pagers: list[_TimePager] = []
        self.readers: dict[str, EventReader] = {}
        try:
            for tenant, path in sorted(stores.items()):
                self._pagers.append(_TimePager(tenant, path))
                self.readers[tenant] = EventReader(path)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        for pager in self._pagers:
            pager.close()
        for reader in self.readers.values():
            reader.close()
        self._pagers.clear()
        self.readers.clear()

    def __enter__(self) -> MergedReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def tenants(self) -> list[str]:
        return [p.tenant for p in self._pagers]

    def page_before(
        self, f: EventFilter, before: MergedKey | None = None, limit: int = 200
    ) -> list[MergedEvent]:
        """Up to `limit` matching events older than `before` (None: the newest), newest first."""
        runs = [pager.before(f, before, limit) for pager in self._pagers]
        return list(islice(heapq.merge(*runs, key=lambda e: e.key, reverse=True), limit))

    def page_after(self, f: EventFilter, after: MergedKey, limit: int = 200) -> list[MergedEvent]:
        """Up to `limit` matching events newer than `after`, oldest first (scrolling back up, live appends)."""
        runs = [pager.after(f, after, limit) for pager in self._pagers]
        return list(islice(heapq.merge(*runs, key=lambda e: e.key), limit))

    def get(self, tenant: str, seq: int) -> StoredEvent | None:
        """One event with its raw JSON (the detail pane)."""
        return self.readers[tenant].get(seq)

    def count(self, f: EventFilter = EventFilter()) -> int:  # noqa: B008 - frozen, never mutated
        return sum(reader.count(f) for reader in self.readers.values())

    def counts_by_type(self, f: EventFilter = EventFilter()) -> dict[str, int]:  # noqa: B008
        total: dict[str, int] = {}
        for reader in self.readers.values():
            for kind, n in reader.counts_by_type(f).items():
                total[kind] = total.get(kind, 0) + n
        return total

    def histogram(self, f: EventFilter, bucket_seconds: int) -> list[tuple[int, dict[str, int]]]:
        """Events per time bucket and family over every store, by time."""
        buckets: dict[int, dict[str, int]] = {}
        for reader in self.readers.values():
            for start, families in reader.histogram(f, bucket_seconds):
                into = buckets.setdefault(start, dict.fromkeys(families, 0))
                for family, n in families.items():
                    into[family] = into.get(family, 0) + n
        return sorted(buckets.items())


def open_merged(stores: Mapping[str, Path]) -> MergedReader:
    """A merged reader; a store that cannot be read raises StorageError naming it."""
    try:
        return MergedReader(stores)
    except sqlite3.OperationalError as exc:
        from tenant_events.errors import StorageError

        raise StorageError(f"cannot read the event databases: {exc}") from exc
