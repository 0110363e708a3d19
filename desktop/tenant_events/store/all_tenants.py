"""One view over several tenants' databases, ordered by event time ("All tenants"), paged without loading them.

Order: (event time, tenant, stored seq), newest first; a page is a keyset position in that order, so every page
costs the same at any depth. Each store answers "my next `limit` rows past this position" (time_pager.py, from
its time index), and a k-way merge keeps the first `limit` of them. Filters are the single store's
(`EventFilter`, query.py). Counts, per-type counts and the histogram add up each store's.

A tenant is the name of its database (the profile name), so two profiles of one tenant stay apart.
"""

from __future__ import annotations

import heapq
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

from tenant_events.store.reader import EventReader
from tenant_events.store.time_pager import MAX_SEQ, TimePager
from tenant_events.values.events import EventFilter, StoredEvent


@dataclass(frozen=True, slots=True, order=True)
class AllTenantsKey:
    """A position in the all-tenants order: event time (unix ms), tenant, stored seq."""

    time_ms: int
    tenant: str
    seq: int


@dataclass(frozen=True, slots=True)
class AllTenantsEvent:
    tenant: str
    time_ms: int
    event: StoredEvent

    @property
    def key(self) -> AllTenantsKey:
        return AllTenantsKey(self.time_ms, self.tenant, self.event.seq)


class _Pager:
    """One store's side of the merge: its rows before or after an all-tenants position."""

    def __init__(self, tenant: str, path: Path) -> None:
        self.tenant = tenant
        self.pager = TimePager(tenant, path)

    def _position(self, key: AllTenantsKey) -> tuple[int, int]:
        """The key as this store's (time_ms, seq) bound. Inside the key's millisecond every row of a tenant ordered
        before the key's is below it, and of one ordered after, above it: seq bound MAX_SEQ or 0 serves both
        directions (`seq < bound` going newest first, `seq > bound` going oldest first)."""
        if self.tenant == key.tenant:
            return key.time_ms, key.seq
        return key.time_ms, (MAX_SEQ if self.tenant < key.tenant else 0)

    def page(
        self, f: EventFilter, key: AllTenantsKey | None, limit: int, newest_first: bool
    ) -> list[AllTenantsEvent]:
        position = None if key is None else self._position(key)
        return [
            AllTenantsEvent(self.tenant, ms, e) for ms, e in self.pager.page(f, position, limit, newest_first)
        ]


class AllTenantsReader:
    """Pages, counts and histograms over several tenant databases (`{tenant: path}`); close when done."""

    def __init__(self, stores: Mapping[str, Path]) -> None:
        self._pagers: list[_Pager] = []
        self.readers: dict[str, EventReader] = {}
        try:
            for tenant, path in sorted(stores.items()):
                self._pagers.append(_Pager(tenant, path))
                self.readers[tenant] = EventReader(path)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        for pager in self._pagers:
            pager.pager.close()
        for reader in self.readers.values():
            reader.close()
        self._pagers.clear()
        self.readers.clear()

    def __enter__(self) -> AllTenantsReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def tenants(self) -> list[str]:
        return [p.tenant for p in self._pagers]

    def page_before(
        self, f: EventFilter, before: AllTenantsKey | None = None, limit: int = 200
    ) -> list[AllTenantsEvent]:
        """Up to `limit` matching events older than `before` (None: the newest), newest first."""
        runs = [pager.page(f, before, limit, newest_first=True) for pager in self._pagers]
        return list(islice(heapq.merge(*runs, key=lambda e: e.key, reverse=True), limit))

    def page_after(self, f: EventFilter, after: AllTenantsKey, limit: int = 200) -> list[AllTenantsEvent]:
        """Up to `limit` matching events newer than `after`, oldest first (scrolling back up, live appends)."""
        runs = [pager.page(f, after, limit, newest_first=False) for pager in self._pagers]
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


def open_all_tenants(stores: Mapping[str, Path]) -> AllTenantsReader:
    """An all-tenants reader; a store that cannot be read raises StorageError naming it."""
    try:
        return AllTenantsReader(stores)
    except sqlite3.OperationalError as exc:
        from tenant_events.errors import StorageError

        raise StorageError(f"cannot read the event databases: {exc}") from exc
