"""A tenant's history as the store holds it, made by the bundled simulator's tenant life (users, organizations,
groups, requests from a few addresses) without a server: events spread over days, decoded by the client's own
wire code into the rows the engine would store."""

from __future__ import annotations

import random
from pathlib import Path

from tenant_events.simulator.activity import Activity
from tenant_events.simulator.config import SimulatorConfig
from tenant_events.simulator.event_log import EventLog
from tenant_events.simulator.storage import SimStore
from tenant_events.store import Batch, EventRow, StoreWriter
from tenant_events.store.archive_build import LiveRow
from tenant_events.wire.messages import decode_frame_timed


def history(n: int, start: float, spacing: float, seed: int = 1) -> list[EventRow]:
    """`n` events from unix time `start`, `spacing` seconds apart on average; each stored a moment after its time."""
    config = SimulatorConfig(seed=seed, retention=max(n, 1))
    store = SimStore(None)
    try:
        log = EventLog(config, store)
        activity = Activity(config, log)
        rng = random.Random(seed)
        ts = start
        for _ in range(n):
            ts += rng.expovariate(1 / spacing)
            name, data = activity.life.next_event(ts)
            log.append(name, data, ts, purpose=activity._purpose())
        log.flush()
        out = []
        for frame in log.frames:
            head, body = frame.split(b"\ndata: ", 1)
            text = body.rstrip(b"\n").decode()
            message, time_text = decode_frame_timed(head.split(b"\n", 1)[0][7:].decode(), text)
            row = EventRow.from_message(message, text, 0.0, time_text)  # type: ignore[arg-type]
            out.append(row._replace(received_at=row.time_ms / 1000 + 0.5))
        return out
    finally:
        store.close()


def fill_store(path: Path, n: int, days: float, now: float, seed: int = 1) -> list[str]:
    """A store of `n` events spread over the `days` before `now`, fully indexed; their ids in stored order."""
    rows = history(n, now - days * 86400, days * 86400 / n, seed)
    writer = StoreWriter(path)
    try:
        for at in range(0, n, 500):
            writer.commit_sync(Batch(events=rows[at : at + 500]))
        writer.index_all_sync()
    finally:
        writer.close()
    return [r.event_id for r in rows]


def live_rows(rows: list[EventRow], first_seq: int = 1) -> list[LiveRow]:
    """`rows` as the mover reads them from the live table (seq first, numbered from `first_seq`), for the archive's
    writers."""
    return [
        (
            first_seq + i,
            r.event_id,
            r.offset,
            r.type,
            r.time,
            r.time_ms,
            r.source,
            r.tenant,
            r.purpose,
            None,
            r.raw,
            r.received_at,
        )
        for i, r in enumerate(rows)
    ]
