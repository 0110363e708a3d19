"""Builds event-stream frames (docs/event-stream.md "Frames") for tests that need no server (store and
decoding tests)."""

from __future__ import annotations

import random
import string
from datetime import UTC, datetime, timedelta

import orjson

from tenant_events.store import EventRow
from tenant_events.wire import EventMessage, decode_frame

_ALNUM = string.ascii_letters + string.digits


def event_id(rng: random.Random) -> str:
    return "evt_" + "".join(rng.choices(_ALNUM, k=16))


def frame(
    i: int,
    *,
    type_: str = "user.created",
    when: datetime | None = None,
    email: str | None = None,
    purpose: str | None = None,
    eid: str | None = None,
    rng: random.Random | None = None,
) -> tuple[str, str]:
    """(SSE event name, data text) of a valid event message number `i`."""
    rng = rng or random.Random(i)
    when = when or datetime(2026, 11, 1, tzinfo=UTC) + timedelta(seconds=i)
    obj: dict[str, object]
    if type_.startswith("user."):
        obj = {
            "user_id": f"auth0|{i}",
            "email": email or f"user{i}@example.com",
            "created_at": when.isoformat(),
            "updated_at": when.isoformat(),
            "identities": [],
        }
    else:
        obj = {"id": f"org_{i:016d}", "name": f"org-{i}"}
    env: dict[str, object] = {
        "specversion": "1.0",
        "type": type_,
        "source": "urn:auth0:demo.example.test",
        "id": eid or event_id(rng),
        "time": when.isoformat().replace("+00:00", "Z"),
        "data": {"object": obj},
        "xtenant": "demo",
        "xstream": "est_" + "a" * 16,
    }
    if purpose:
        env["xpurpose"] = purpose
    return type_, orjson.dumps({"offset": f"off-{i:08d}", "event": env}).decode()


def row(i: int, **kw: object) -> EventRow:
    name, data = frame(i, **kw)  # type: ignore[arg-type]
    msg = decode_frame(name, data)
    assert isinstance(msg, EventMessage)
    return EventRow.from_message(msg, data, received_at=1.0)
