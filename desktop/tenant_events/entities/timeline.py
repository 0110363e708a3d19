"""Object timelines across tenants: everything stored about one user, organization, group, role or connection,
and its state at the end (Qt-free; the CLI's `timeline` and the desktop's timeline pane use it).

One `DirectoryReader` per tenant database. An object is resolved in each tenant (an email can be a different user
id in each); its events come newest first from every tenant, merged by event time, paged with one position per
(tenant, entity) so a page never loads a whole timeline.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tenant_events.entities.objects import ObjectSpec
from tenant_events.store.entity_reader import DirectoryReader, open_directory
from tenant_events.store.entity_records import Entity, EntityState
from tenant_events.values.events import StoredEvent

Key = tuple[str, str, str]  # tenant, kind, id


@dataclass(frozen=True, slots=True)
class TimelineEntry:
    """One event of a timeline: the tenant (store name) it is stored in and which entity of that tenant it names."""

    tenant: str
    entity: Entity
    event: StoredEvent

    @property
    def order(self) -> tuple[str, str, int]:
        """Event time, then tenant, then stored order: the "All tenants" view's order too."""
        return (self.event.time, self.tenant, self.event.seq)


@dataclass
class TimelinePage:
    entries: list[TimelineEntry]
    before: dict[Key, int] = field(default_factory=dict)  # pass back for the next (older) page
    done: bool = False


class Timelines:
    """Timelines over several tenant databases (`{tenant name: database path}`); close when done."""

    def __init__(self, stores: Mapping[str, Path]) -> None:
        self._readers: dict[str, DirectoryReader] = {}
        try:
            for tenant, path in sorted(stores.items()):
                self._readers[tenant] = open_directory(path)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        for reader in self._readers.values():
            reader.close()
        self._readers.clear()

    def __enter__(self) -> Timelines:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def tenants(self) -> list[str]:
        return list(self._readers)

    def resolve(self, spec: ObjectSpec) -> list[tuple[str, Entity]]:
        """The entities `spec` names in each tenant: by id (else by name, or email for users; else by a name it
        had before a rename). An id the directory does not know yet (a catch-up not indexed) is still looked for
        in the events."""
        found: list[tuple[str, Entity]] = []
        for tenant, reader in self._readers.items():
            if spec.kind == "email":
                found += [(tenant, e) for e in reader.by_email(spec.text)]
                continue
            matches = reader.find(spec.kind, spec.text) or reader.find_former(spec.kind, spec.text)
            found += [(tenant, e) for e in matches] or [(tenant, Entity(spec.kind, spec.text))]
        return found

    def page(
        self, entities: list[tuple[str, Entity]], before: Mapping[Key, int] | None = None, limit: int = 100
    ) -> TimelinePage:
        """The next `limit` events naming any of `entities`, newest first; `before` from the previous page."""
        positions = dict(before or {})
        heads: list[list[TimelineEntry]] = []
        for tenant, entity in entities:
            key = (tenant, entity.kind, entity.id)
            events = self._readers[tenant].timeline(entity.kind, entity.id, positions.get(key), limit)
            heads.append([TimelineEntry(tenant, entity, e) for e in events])
        merged = heapq.merge(*heads, key=lambda entry: entry.order, reverse=True)
        entries: list[TimelineEntry] = []
        seen: set[tuple[str, int]] = set()
        used = 0
        for entry in merged:
            if len(entries) == limit:
                break
            used += 1
            if (entry.tenant, entry.event.seq) not in seen:  # an event naming two of the entities: once
                seen.add((entry.tenant, entry.event.seq))
                entries.append(entry)
            key = (entry.tenant, entry.entity.kind, entry.entity.id)
            positions[key] = min(positions.get(key, entry.event.seq + 1), entry.event.seq)
        done = all(len(h) < limit for h in heads) and used == sum(len(h) for h in heads)
        return TimelinePage(entries, positions, done)

    def everything(self, entities: list[tuple[str, Entity]], chunk: int = 1000) -> Iterator[TimelineEntry]:
        """Every event naming `entities`, oldest first (reads newest first in chunks, then reverses)."""
        collected: list[TimelineEntry] = []
        before: dict[Key, int] = {}
        while True:
            page = self.page(entities, before, chunk)
            collected += page.entries
            before = page.before
            if page.done:
                break
        return iter(sorted(collected, key=lambda entry: entry.order))

    def states(self, entities: list[tuple[str, Entity]]) -> list[tuple[str, EntityState]]:
        """The directory's state of each entity that it knows, per tenant."""
        out = []
        for tenant, entity in entities:
            state = self._readers[tenant].state(entity.kind, entity.id)
            if state is not None:
                out.append((tenant, state))
        return out

    def directory(self, tenant: str) -> DirectoryReader:
        """The tenant's directory reader (for sentences: entities/sentences.py describe_all)."""
        return self._readers[tenant]


def resolved_as(spec: ObjectSpec, entities: list[tuple[str, Entity]]) -> str:
    """What the user asked for, as found: `org:Globex (formerly Initech)` when it was found by a name it had
    before a rename, else as written."""
    wanted = spec.text.casefold()
    renamed = sorted(
        {
            e.label
            for _t, e in entities
            if e.kind == spec.kind
            and wanted not in {(v or "").casefold() for v in (e.id, e.name, e.display, e.email)}
        }
    )
    if not renamed:
        return str(spec)
    short = str(spec).partition(":")[0]
    return f"{short}:{' / '.join(renamed)} (formerly {spec.text})"
