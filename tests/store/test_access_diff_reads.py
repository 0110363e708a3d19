"""An access diff over the archive tier reads the versions of every entity it names at once: over a team's
archive each archive statement reads the token lists of every file, and a diff names thousands of entities, so a
statement an entity made a long diff take minutes. The answer is the one entity-by-entity reads give."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from helpers.entity_events import T0, simulated_rows
from tenant_events.access.review import AccessReview
from tenant_events.store import Batch, StoreWriter
from tenant_events.store.access_reader import AccessReader
from tenant_events.store.access_records import EventFacts, HeldAt
from tenant_events.store.archive_keeper import keep
from tenant_events.store.entity_records import Entity
from tenant_events.values.retention import Retention

LATER = T0.timestamp() + 400 * 86400  # every simulated event is old enough to move


class _OneByOne:
    """The same history, read an entity at a time (a source without `objects_of_many`)."""

    def __init__(self, reader: AccessReader) -> None:
        self.reader = reader

    def held_at(self, moment: int) -> HeldAt:
        return self.reader.held_at(moment)

    def events(self, seqs: Iterable[int]) -> Mapping[int, EventFacts]:
        return self.reader.events(seqs)

    def entities(self, keys: Iterable[tuple[str, str]]) -> Mapping[tuple[str, str], Entity]:
        return self.reader.entities(keys)

    def objects_of(self, kind: str, entity_id: str) -> Sequence[tuple[int, Mapping[str, Any]]]:
        return self.reader.objects_of(kind, entity_id)


def test_a_diff_over_the_archive_reads_the_versions_of_the_entities_it_names_in_one_statement(
    tmp_path: Path, archive_statements: list[str]
):
    path = tmp_path / "t.sqlite3"
    rows, _life = simulated_rows(3000, seed=7)
    writer = StoreWriter(path)
    try:
        for at in range(0, len(rows), 500):
            writer.commit_sync(Batch(events=rows[at : at + 500], cursor=str(at)))
        writer.index_all_sync()
        assert keep(writer, Retention(keep_live_days=30, settle_seconds=0), LATER).moved > 2500
    finally:
        writer.close()
    with AccessReader(path) as reader:
        archive_statements.clear()
        diff = AccessReview("acme", reader).diff(rows[100].time_ms, None)
        batched = len(archive_statements)
        archive_statements.clear()
        one_by_one = AccessReview("acme", _OneByOne(reader)).diff(rows[100].time_ms, None)
        singly = len(archive_statements)
        now = reader.entities((e.kind, e.id) for c in diff.changes for e in c.grant.entities)
    renamed = {
        (e.kind, e.id) for c in diff.changes for e in c.grant.entities if e.label != now[e.kind, e.id].label
    }
    assert len(diff.changes) > 200 and len(renamed) > 20, "changes that name entities renamed since"
    assert diff == one_by_one
    assert singly > 100, singly  # a statement an entity
    assert batched <= 4, archive_statements  # the events' payloads, and every entity's versions at once
