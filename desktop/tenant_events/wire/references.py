"""Which users, organizations, groups, roles and connections an event names, and in which place.

Used where an event is shown (the summary sentence names them: entities/sentences.py) and to decide whether an
event concerns an object (object timelines: store/entity_reader.py). The store's directory (store/directory.py)
reads the same fields in SQL; tests/store/test_directory.py checks the two agree for every event type. Field
names follow the real service's payloads (docs/event-stream.md "Payloads"); anything missing or of the wrong type
is skipped, never raised. Besides `data.object`, `data.context.connection` names the connection a sign-up or
log-in went through: the directory learns connections' names and strategies from it, and a connection's
timeline holds those sign-ups and log-ins.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, NamedTuple

KINDS: Final = ("user", "organization", "group", "role", "connection")


class Ref(NamedTuple):
    """One entity named by an event: its kind, id, the place it holds in the event and a name the event gives it."""

    kind: str
    id: str
    place: str  # subject | organization | user | group | role | connection | member | parent | context
    name: str | None = None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _obj(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _user_label(obj: Mapping[str, Any]) -> str | None:
    return _text(obj.get("email")) or _text(obj.get("username")) or _text(obj.get("name"))


def _group_refs(group: Mapping[str, Any], place: str) -> list[Ref]:
    """A group and the organization or connection it belongs to (`organization_id` / `connection_id`)."""
    out: list[Ref] = []
    if gid := _text(group.get("id")):
        out.append(Ref("group", gid, place, _text(group.get("name"))))
    if org := _text(group.get("organization_id")):
        out.append(Ref("organization", org, "parent"))
    if con := _text(group.get("connection_id")):
        out.append(Ref("connection", con, "parent"))
    return out


def _member(member: Mapping[str, Any]) -> list[Ref]:
    """A group member: a user, or a connection (docs/event-stream.md "Payloads": `member_type` "connection")."""
    if member.get("member_type") == "connection":
        con = _text(member.get("connection_id")) or _text(member.get("id"))
        return [Ref("connection", con, "member")] if con else []
    uid = _text(member.get("id"))
    return [Ref("user", uid, "member")] if uid else []


def _ref(kind: str, value: object, place: str) -> list[Ref]:
    obj = _obj(value)
    key = "user_id" if kind == "user" else "id"
    eid = _text(obj.get(key))
    if eid is None:
        return []
    name = None if kind == "user" else _text(obj.get("display_name")) or _text(obj.get("name"))
    return [Ref(kind, eid, place, name)]


def _context_connection(data: Mapping[str, Any]) -> list[Ref]:
    """The connection a sign-up or log-in went through (`data.context.connection{id, name, strategy}`)."""
    con = _obj(_obj(data.get("context")).get("connection"))
    cid = _text(con.get("id"))
    return [Ref("connection", cid, "context", _text(con.get("name")))] if cid else []


def references(event_type: str, data: Mapping[str, Any]) -> tuple[Ref, ...]:
    """Every entity `data.object` names, the event's own object first, then the connection `data.context` names;
    duplicates (an organization group's organization named twice) are kept once."""
    obj = _obj(data.get("object"))
    family, _, rest = event_type.partition(".")
    refs: list[Ref] = []
    if family == "user":
        if uid := _text(obj.get("user_id")):
            refs.append(Ref("user", uid, "subject", _user_label(obj)))
    elif "." not in rest and family == "organization":
        if oid := _text(obj.get("id")):
            label = _text(obj.get("display_name")) or _text(obj.get("name"))
            refs.append(Ref("organization", oid, "subject", label))
    elif "." not in rest and family == "group":
        refs += _group_refs(obj, "subject")
    else:
        refs += _ref("organization", obj.get("organization"), "organization")
        refs += _ref("user", obj.get("user"), "user")
        if "group" in obj:
            refs += _group_refs(_obj(obj.get("group")), "group")
        refs += _ref("role", obj.get("role"), "role")
        refs += _ref("connection", obj.get("connection"), "connection")
        if "member" in obj:
            refs += _member(_obj(obj.get("member")))
    refs += _context_connection(data)
    seen: set[tuple[str, str]] = set()
    unique = []
    for ref in refs:
        if (ref.kind, ref.id) not in seen:
            seen.add((ref.kind, ref.id))
            unique.append(ref)
    return tuple(unique)


def names(event_type: str, data: Mapping[str, Any], kind: str, entity_id: str) -> bool:
    """Whether the event names that entity (object timelines)."""
    return any(r.kind == kind and r.id == entity_id for r in references(event_type, data))


def subject_name(kind: str, obj: Mapping[str, Any]) -> str | None:
    """What an entity's own created/updated object calls it: the directory's label as of that event."""
    return next(
        (r.name for r in references(f"{kind}.updated", {"object": obj}) if r.place == "subject"), None
    )
