"""Events of every type with the payload shapes of docs/event-stream.md "Payloads", for directory, sentence and timeline tests.

`Tenant` hands out event rows with increasing (or chosen) times; `simulated_rows` runs the simulator's own tenant
generator (in process, seeded) and returns its events as stored rows, with the generator for checking its world.
"""

from __future__ import annotations

import itertools
import random
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from tenant_events.simulator.generator import TenantLife
from tenant_events.simulator.world import iso_ms
from tenant_events.store import EventRow
from tenant_events.wire import EventMessage, decode_frame

T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


def envelope_row(event_type: str, data: dict[str, Any], when: datetime | str, n: int) -> EventRow:
    """A stored row exactly as the engine builds it from a valid frame."""
    stamp = when if isinstance(when, str) else when.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    env = {
        "specversion": "1.0",
        "type": event_type,
        "source": "urn:auth0:demo.example.test",
        "id": f"evt_{n:016d}",
        "time": stamp,
        "data": data,
        "xtenant": "demo",
        "xstream": "est_" + "a" * 16,
    }
    raw = orjson.dumps({"offset": f"off-{n:08d}", "event": env}).decode()
    message = decode_frame(event_type, raw)
    assert isinstance(message, EventMessage), message
    return EventRow.from_message(message, raw, received_at=1.0)


class Tenant:
    """Builds events; each call is one second after the previous unless `at` (seconds after T0) says otherwise."""

    def __init__(self) -> None:
        self._n = itertools.count(1)
        self._clock = itertools.count(0)

    def row(self, event_type: str, obj: dict[str, Any], at: float | None = None) -> EventRow:
        n = next(self._n)
        seconds = next(self._clock) if at is None else at
        return envelope_row(event_type, {"object": obj}, T0 + timedelta(seconds=seconds), n)

    # -- the objects of each family (docs/event-stream.md "Payloads")
    @staticmethod
    def user(uid: str, email: str | None = None, name: str | None = None, **more: Any) -> dict[str, Any]:
        obj: dict[str, Any] = {
            "user_id": uid,
            "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:00Z",
            "identities": [],
            **more,
        }
        if email:
            obj["email"] = email
        if name:
            obj["name"] = name
        return obj

    @staticmethod
    def org(oid: str, name: str | None = None, display: str | None = None) -> dict[str, Any]:
        obj: dict[str, Any] = {"id": oid}
        if name:
            obj["name"] = name
        if display:
            obj["display_name"] = display
        return obj

    @staticmethod
    def group(gid: str, name: str = "", kind: str = "tenant", parent: str | None = None) -> dict[str, Any]:
        obj: dict[str, Any] = {
            "id": gid,
            "type": kind,
            "name": name or gid,
            "created_at": "2026-01-01T00:00:00Z",
        }
        if kind == "organization" and parent:
            obj["organization_id"] = parent
        if kind == "connection" and parent:
            obj["connection_id"] = parent
        return obj

    @staticmethod
    def role(rid: str, name: str | None = None) -> dict[str, Any]:
        return {"id": rid, "name": name} if name else {"id": rid}


def simulated_rows(n: int, seed: int = 3) -> tuple[list[EventRow], TenantLife]:
    """`n` events of the simulator's tenant life (every type, consistent world) as rows, 0.5 s apart on average."""
    life = TenantLife(seed, tenant_id="ten_DemoTenant000001")
    rng = random.Random(seed)
    ts = T0.timestamp()
    rows = []
    for i in range(n):
        ts += rng.expovariate(2)
        name, data = life.next_event(ts)
        rows.append(envelope_row(name, data, iso_ms(ts), i))
    return rows, life
