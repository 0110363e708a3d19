"""The "All tenants" table's pages: every tenant's events by event time, newest first, with summary sentences.

Over store/all_tenants.py (a keyset position per page: every page costs the same at any depth) and each
tenant's entity directory, sharing the all-tenants reader's connections. Blocking: the window calls it on a
worker thread. A row knows its tenant (the store it came from), so names, the detail pane and timelines go to
the right directory.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tenant_events.entities.sentences import Sentence, describe_stored
from tenant_events.store.all_tenants import AllTenantsEvent, AllTenantsKey, AllTenantsReader, open_all_tenants
from tenant_events.store.entity_reader import DirectoryReader
from tenant_events.values.events import EventFilter, StoredEvent


@dataclass(frozen=True, slots=True)
class AllTenantsRow:
    tenant: str
    event: StoredEvent
    key: AllTenantsKey
    sentence: Sentence | None


class AllTenantsPages:
    """Pages over the tenants' databases (`{tenant: path}`); close when the tenants change."""

    def __init__(self, stores: Mapping[str, Path]) -> None:
        self.stores = dict(stores)
        self.reader: AllTenantsReader = open_all_tenants(stores)
        self._directories = {t: DirectoryReader.over(r) for t, r in self.reader.readers.items()}

    def close(self) -> None:
        self.reader.close()

    def first(self, f: EventFilter, limit: int) -> list[AllTenantsRow]:
        return self._rows(self.reader.page_before(f, None, limit))

    def older(self, f: EventFilter, key: AllTenantsKey, limit: int) -> list[AllTenantsRow]:
        """The `limit` rows after `key` going down (older), newest first."""
        return self._rows(self.reader.page_before(f, key, limit))

    def newer(self, f: EventFilter, key: AllTenantsKey, limit: int) -> list[AllTenantsRow]:
        """Rows newer than `key` (live arrivals), newest first."""
        rows = self.reader.page_after(f, key, limit)
        rows.reverse()
        return self._rows(rows)

    def get(self, tenant: str, seq: int) -> StoredEvent | None:
        return self.reader.get(tenant, seq) if tenant in self.reader.readers else None

    def _rows(self, events: list[AllTenantsEvent]) -> list[AllTenantsRow]:
        wanted: dict[str, list[int]] = {}
        for e in events:
            wanted.setdefault(e.tenant, []).append(e.event.seq)
        said: dict[tuple[str, int], Sentence] = {}
        for tenant, seqs in wanted.items():
            said.update({(tenant, s): v for s, v in describe_stored(self._directories[tenant], seqs).items()})
        return [AllTenantsRow(e.tenant, e.event, e.key, said.get((e.tenant, e.event.seq))) for e in events]
