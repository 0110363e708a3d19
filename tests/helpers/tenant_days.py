"""Simulated days of a tenant's life, each event stored as it happened: for the tests of what the archive's upkeep
settles day after day (the access history, the entity directory)."""

from __future__ import annotations

import random
from collections.abc import Iterator

from helpers.entity_events import T0, envelope_row
from tenant_events.simulator.generator import TenantLife
from tenant_events.simulator.world import iso_ms
from tenant_events.store import EventRow
from tenant_events.store.entity_reader import DirectoryReader
from tenant_events.store.entity_records import EntityState
from tenant_events.store.entity_state import MAX_ENDED

DAY = 86400.0


def tenant_days(days: int, per_day: int, seed: int) -> Iterator[tuple[float, list[EventRow]]]:
    """Each simulated day's end and its events (the simulator's tenant life, seeded), from T0 on."""
    life = TenantLife(seed, tenant_id="ten_DemoTenant000001")
    rng = random.Random(seed)
    ts, n = T0.timestamp(), 0
    for day in range(days):
        end = T0.timestamp() + (day + 1) * DAY
        rows = []
        while (ts := ts + rng.expovariate(per_day / DAY)) < end:
            name, data = life.next_event(ts)
            rows.append(envelope_row(name, data, iso_ms(ts), n)._replace(received_at=ts))
            n += 1
        yield end, rows


def state_seen(reader: DirectoryReader, kind: str, entity_id: str) -> tuple[object, ...] | None:
    """What the entity's state says, in a form two stores can be compared by: its ended links in full when all
    are listed, else (ties in the newest MAX_ENDED may pick either) their count and their end times."""
    state: EntityState | None = reader.state(kind, entity_id)
    if state is None:
        return None
    links = {(link.relation, link.ends, link.since_ms, link.until_ms) for link in state.links}
    if state.ended_total > MAX_ENDED:
        current = {x for x in links if x[3] is None}
        ends = sorted(x[3] for x in links if x[3] is not None)
        return state.entity, state.ended_total, current, ends
    return state.entity, state.ended_total, links
