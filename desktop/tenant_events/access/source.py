"""The one interface the access review reads its history through, and opening it for a tenant database.

`store/access_reader.py` answers it from one tenant database. A reader of another tier (an archive of old events)
answers the same questions with the same records (store/access_records.py), so the review reads any tier, or a
view over several, without a change.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from tenant_events.store.access_reader import AccessReader, open_access
from tenant_events.store.access_records import EventFacts, HeldAt
from tenant_events.store.entity_records import Entity
from tenant_events.store.reindex import catch_up_access


class HistorySource(Protocol):
    """What the review asks of a tenant's history."""

    def held_at(self, moment: int) -> HeldAt:
        """The spans that held at stamp `moment` (every event stamped up to it counted), with the history's reach."""
        ...

    def events(self, seqs: Iterable[int]) -> Mapping[int, EventFacts]:
        """The events that began or ended spans, by seq (those still stored)."""
        ...

    def entities(self, keys: Iterable[tuple[str, str]]) -> Mapping[tuple[str, str], Entity]:
        """The entities among `(kind, id)` keys, named as the event table names them."""
        ...

    def objects_of(self, kind: str, entity_id: str) -> Sequence[tuple[int, Mapping[str, Any]]]:
        """(seq, object) of each created/updated event of the entity, oldest first: a change is said with the
        names at its time, as the event table says its event."""
        ...


def open_history(path: Path, *, catch_up: bool = False) -> AccessReader:
    """The history of the tenant database at `path`; with `catch_up`, the stored events it has not taken in yet
    are taken in first (the command line does this: no idle-time indexer may be running)."""
    if catch_up:
        catch_up_access(path)
    return open_access(path)
