"""What one stored event says about access, and a link's spans from its adds and endings (pure Python).

The access history (access_history.py) keeps, for every link of the entity directory (store/directory.py `Rel`),
the spans of time it held. A span runs from the add that started it to the first ending after that add. The
endings are the directory's (store/entity_state.py): the link's own removal, the deletion of any end (a user,
an organization, a group), the deletion of the organization an organization's group belongs to, and, for a role
held in an organization, the member leaving that organization. So at any moment a link holds exactly when the
directory, given only the events up to that moment, would say it holds: its newest add up to then is newer than
every ending up to then. Stamps are the directory's (`time_ms << 20 | seq`), so arrival order does not matter.

Keys follow the directory's trigger field for field: (rel, a, b, c) with c '' for two-ended relations; a group
member that is a connection is a GROUP_CONNECTION_MEMBER link to the connection.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from tenant_events.store.directory import Rel
from tenant_events.store.entity_state import ENDS

HOLDS: Final = 2**62  # the ending stamp of a span that still holds (entity_state.py uses the same)
OPEN_REACH: Final = 63  # the reach of a span that still holds: it reaches every later moment
BEFORE: Final = 0  # the start of a span that began before the first stored event (link_spans)

Key = tuple[int, str, str, str]  # (rel, a, b, c) as the directory's links table has them
Mark = tuple[int, int, bool]  # (stamp, seq, adds)
Span = tuple[int, int, int, int | None]  # (since, since_seq, until or HOLDS, until_seq)

# Link event types: the relation and whether the event adds.
LINK_TYPES: Final[dict[str, tuple[Rel, bool]]] = {
    "organization.member.added": (Rel.ORG_MEMBER, True),
    "organization.member.deleted": (Rel.ORG_MEMBER, False),
    "organization.member.role.assigned": (Rel.ORG_MEMBER_ROLE, True),
    "organization.member.role.deleted": (Rel.ORG_MEMBER_ROLE, False),
    "organization.connection.added": (Rel.ORG_CONNECTION, True),
    "organization.connection.removed": (Rel.ORG_CONNECTION, False),
    "organization.group.role.assigned": (Rel.ORG_GROUP_ROLE, True),
    "organization.group.role.deleted": (Rel.ORG_GROUP_ROLE, False),
    "group.member.added": (Rel.GROUP_MEMBER, True),
    "group.member.deleted": (Rel.GROUP_MEMBER, False),
    "group.role.assigned": (Rel.GROUP_ROLE, True),
    "group.role.deleted": (Rel.GROUP_ROLE, False),
}
# Deletions that end every link of the deleted entity: the kind, and the field of `data.object` with its id.
DELETIONS: Final = {"user.deleted": ("user", "user_id"), "organization.deleted": ("organization", "id"),
                    "group.deleted": ("group", "id")}  # fmt: skip
GROUP_EVENTS: Final = ("group.created", "group.updated", "group.deleted")
TYPES: Final = frozenset(LINK_TYPES) | frozenset(DELETIONS) | frozenset(GROUP_EVENTS)
END_KINDS: Final[dict[int, tuple[str, ...]]] = {
    int(rel): kinds for rel, kinds in ENDS.items()
}  # by links.rel


def _text(value: Any) -> str | None:
    """A value as the directory stores it (a TEXT column): a string, or a whole number as its digits."""
    if type(value) is str:
        return value
    return str(value) if type(value) is int else None


def _ref(obj: Any, key: str, field: str) -> str | None:
    """`obj[key][field]` (a reference's id), as the directory stores it."""
    ref = obj.get(key) if type(obj) is dict else None
    return _text(ref.get(field)) if type(ref) is dict else None


# Where each relation's ends are in `data.object`: (key, field) of a, b and c (None: the relation has two ends).
_PATHS: Final[dict[Rel, tuple[tuple[str, str], tuple[str, str], tuple[str, str] | None]]] = {
    Rel.ORG_MEMBER: (("organization", "id"), ("user", "user_id"), None),
    Rel.ORG_MEMBER_ROLE: (("organization", "id"), ("user", "user_id"), ("role", "id")),
    Rel.ORG_CONNECTION: (("organization", "id"), ("connection", "id"), None),
    Rel.ORG_GROUP_ROLE: (("organization", "id"), ("group", "id"), ("role", "id")),
    Rel.GROUP_MEMBER: (("group", "id"), ("member", "id"), None),
    Rel.GROUP_ROLE: (("group", "id"), ("role", "id"), None),
}


@dataclass
class Facts:
    """What a run of events says: link marks, deletions, and groups' type and parent (the newest of each)."""

    marks: list[tuple[Key, int, int, bool]] = field(default_factory=list)  # key, stamp, seq, adds
    ends: list[tuple[str, str, int, int]] = field(default_factory=list)  # kind, id, stamp, seq
    groups: dict[str, dict[str, tuple[int, str]]] = field(default_factory=dict)  # id → {attr: (stamp, value)}

    def add(self, event_type: str, stamp: int, seq: int, data: Mapping[str, Any]) -> None:
        obj = data.get("object")
        if type(obj) is not dict:
            return
        link = LINK_TYPES.get(event_type)
        if link is not None:
            self._link(link[0], link[1], obj, stamp, seq)
            group = obj.get("group")
            if type(group) is dict:
                self._group(_text(group.get("id")), group, stamp)
            return
        deletion = DELETIONS.get(event_type)
        if deletion is not None:
            ident = _text(obj.get(deletion[1]))
            if ident is not None:
                self.ends.append((deletion[0], ident, stamp, seq))
        if event_type in GROUP_EVENTS:
            self._group(_text(obj.get("id")), obj, stamp)

    def _link(self, rel: Rel, adds: bool, obj: dict[str, Any], stamp: int, seq: int) -> None:
        (a_key, a_field), (b_key, b_field), c_path = _PATHS[rel]
        a, b = _ref(obj, a_key, a_field), _ref(obj, b_key, b_field)
        c = "" if c_path is None else _ref(obj, *c_path)
        if rel is Rel.GROUP_MEMBER and _ref(obj, "member", "member_type") == "connection":
            rel = Rel.GROUP_CONNECTION_MEMBER  # the member is a connection: its id, else the member's own
            connection = _ref(obj, "member", "connection_id")
            b = b if connection is None else connection
        if a is not None and b is not None and c is not None:
            self.marks.append(((int(rel), a, b, c), stamp, seq, adds))

    def _group(self, ident: str | None, obj: dict[str, Any], stamp: int) -> None:
        """A group's type and parent (its organization or connection), as the directory learns them."""
        if ident is None:
            return
        parent = _text(obj.get("organization_id"))
        if parent is None:
            parent = _text(obj.get("connection_id"))
        seen = self.groups.setdefault(ident, {})
        for attr, value in (("type", _text(obj.get("type"))), ("parent", parent)):
            if value is not None and stamp > seen.get(attr, (-1, ""))[0]:
                seen[attr] = (stamp, value)


def link_spans(marks: Iterable[Mark], endings: Iterable[tuple[int, int]], whole: bool = False) -> list[Span]:
    """The spans a link held: `marks` are its own adds and removals, `endings` the (stamp, seq) of whatever
    else ends it (deletions of its ends, its group's organization, the member leaving). A span starts at an add
    while the link does not hold, and ends at the first ending after it; a second add meanwhile changes nothing.

    With `whole` (`marks` are all the link's own), a link whose first own event is its removal held before it:
    the service removes only what was given, so it was given before the first stored event. That span begins at
    BEFORE, with no event.
    """
    own = list(marks)
    steps = sorted([*own, *((stamp, seq, False) for stamp, seq in endings)])
    out: list[Span] = []
    start: tuple[int, int] | None = None
    if whole and own and not min(own)[2]:
        start = (BEFORE, 0)
    for stamp, seq, adds in steps:
        if adds and start is None:
            start = (stamp, seq)
        elif not adds and start is not None:
            out.append((start[0], start[1], stamp, seq))
            start = None
    if start is not None:
        out.append((start[0], start[1], HOLDS, None))
    return out


def reach(since: int, until: int) -> int:
    """How far a span reaches, as a power of two of its length in stamps: until - since < 2^(reach + 1). A span
    that holds at moment t began after t - 2^(reach + 1), which bounds the rows a reader must look at."""
    return OPEN_REACH if until >= HOLDS else max(0, (until - since).bit_length() - 1)


def group_ends(rel: int) -> tuple[int, ...]:
    """The positions of a relation's ends that are groups (whose organization's deletion ends the link)."""
    return tuple(i for i, kind in enumerate(END_KINDS[rel]) if kind == "group")
