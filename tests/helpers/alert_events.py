"""Stored-event rows shaped like the real payloads (docs/event-stream.md "Payloads"), for alert rule tests without a server."""

from __future__ import annotations

import itertools
import random
import string
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from tenant_events.store import EventRow
from tenant_events.wire import EventMessage, decode_frame

BASE = datetime(2026, 11, 4, 12, 0, tzinfo=UTC)  # a Wednesday, noon UTC
_counter = itertools.count(1)
_rng = random.Random(17)


def _id(prefix: str, n: int = 16) -> str:
    return prefix + "".join(_rng.choices(string.ascii_letters + string.digits, k=n))


def payload(type_: str, **kw: Any) -> dict[str, Any]:
    """`data.object` for `type_`; keywords fill the interesting fields (role, org, user, email)."""
    org = {"id": kw.get("org", "org_" + "A" * 16), "name": "acme"}
    role = {"id": "rol_" + "R" * 16, "name": kw.get("role", "viewer")}
    user = kw.get("user", "auth0|" + _id("", 12))
    if type_.startswith("user."):
        obj: dict[str, Any] = {
            "user_id": user,
            "email": kw.get("email", f"{user[-6:]}@example.com"),
            "identities": [],
            "created_at": "2026-11-01T00:00:00Z",
            "updated_at": "2026-11-01T00:00:00Z",
        }
        if "email_verified" in kw:
            obj["email_verified"] = kw["email_verified"]
        if type_ == "user.deleted":
            obj["deleted_at"] = "2026-11-01T00:00:00Z"
    elif type_ in ("organization.created", "organization.updated", "organization.deleted"):
        obj = dict(org)
    elif type_.startswith("organization.connection."):
        obj = {"organization": org, "connection": {"id": kw.get("connection", "con_" + "C" * 16)}}
    elif type_.startswith("organization.member.role."):
        obj = {"organization": {"id": org["id"]}, "user": {"user_id": user}, "role": role}
    elif type_.startswith("organization.member."):
        obj = {"organization": org, "user": {"user_id": user}}
    elif type_.startswith("organization.group.role."):
        obj = {"organization": {"id": org["id"]}, "group": {"id": "grp_" + "G" * 14}, "role": role}
    elif type_.startswith("group.role."):
        obj = {"group": {"id": "grp_" + "G" * 14, "type": "tenant"}, "role": role}
    elif type_.startswith("group.member."):
        obj = {"group": {"id": "grp_" + "G" * 14}, "member": {"member_type": "user", "id": user}}
    else:
        obj = {
            "id": kw.get("group") or "grp_" + _id("", 14),
            "name": "eng",
            "created_at": "2026-11-01T00:00:00Z",
        }
    return obj


def event(
    type_: str, when: datetime | float, *, tenant: str = "demo", purpose: str | None = None, **kw: Any
) -> EventRow:
    """One stored-event row of `type_` that occurred at `when` (a datetime or seconds after BASE)."""
    at = when if isinstance(when, datetime) else BASE + timedelta(seconds=when)
    n = next(_counter)
    env: dict[str, Any] = {
        "specversion": "1.0",
        "type": type_,
        "source": "urn:auth0:demo.example.test",
        "id": _id("evt_"),
        "time": at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "data": {"object": payload(type_, **kw)},
        "xtenant": tenant,
        "xstream": "est_" + "a" * 16,
    }
    if purpose:
        env["xpurpose"] = purpose
    if "client" in kw:  # (client id, its name): who acted, as the service's context says it
        client_id, client_name = kw["client"]
        env["data"]["context"] = {"client": {"id": client_id, "name": client_name}}
    data = orjson.dumps({"offset": f"off-{n:08d}", "event": env}).decode()
    msg = decode_frame(type_, data)
    assert isinstance(msg, EventMessage)
    return EventRow.from_message(msg, data, received_at=at.timestamp())


def clock_at(seconds_after_base: float) -> Any:
    """A clock for RuleEngine that says `BASE + seconds` (events near it are live, not a catch-up)."""
    now = [BASE.timestamp() + seconds_after_base]

    def clock() -> float:
        return now[0]

    clock.now = now  # type: ignore[attr-defined]  # tests move it
    return clock


# A fresh simulator's organizations were all created minutes ago, so a connection its `org_connection` scenario adds
# is set-up traffic (the onboarding rule's info alert). Tests that act it out as an ordinary warning incident
# ("Organization connection changed") take every connection change as that rule's, set-up or not:
EVERY_CONNECTION_CHANGE = [
    {"id": "org-connection", "state": []},
    {"id": "org-connection-onboarding", "enabled": False},
]
