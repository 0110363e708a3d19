"""Plain records of the entity directory as readers see it: entities, the links between them, an entity's state.

Times are unix milliseconds of the events that set them (the directory's stamps without their tie-break bits,
store/directory.py). Qt-free and SQL-free: entities/sentences.py and entities/timeline.py build on these.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final, NamedTuple

STAMP_SHIFT: Final = 20


class StoredPayload(NamedTuple):
    """A stored event's type, its `data`, and its directory stamp (time_ms << 20 | seq's low bits)."""

    type: str
    data: dict[str, Any]
    stamp: int


def stamp_ms(stamp: int | None) -> int | None:
    """Event time (unix ms) of a directory stamp; None stays None."""
    return None if stamp is None or stamp < 0 else stamp >> STAMP_SHIFT


@dataclass(frozen=True, slots=True)
class Entity:
    """One user, organization, group, role or connection as far as the stored events tell.

    An entity only ever named by reference has its id and little else (`name` etc. None) until more arrives.
    """

    kind: str
    id: str
    name: str | None = None
    display: str | None = None  # an organization's display_name
    email: str | None = None
    detail: str | None = None  # a group's type, a connection's strategy
    created_ms: int | None = None
    deleted_ms: int | None = None  # set while deleted: the newest delete is newer than the newest create
    stamps: tuple[int | None, ...] = ()  # directory stamps of name, display, email, detail (as set), if read

    @property
    def label_stamp(self) -> int | None:
        """The directory stamp of the event that set what `label` says (None when unknown): a sentence about an
        event older than it names the entity as it was then (entities/sentences.py)."""
        if len(self.stamps) != 4:
            return None
        name, display, email, detail = self.stamps
        if self.kind == "user":
            return email if self.email else name if self.name else detail if self.detail else None
        if self.kind == "organization":
            return display if self.display else name if self.name else None
        if self.kind == "connection" and self.name and self.detail and self.detail != self.name:
            return max(name or 0, detail or 0)
        return name if self.name else None

    @property
    def label(self) -> str:
        """What to call it in a sentence: a user's email, an organization's display name, a connection's name
        with its strategy ("acme-saml (samlp)"; the name alone when they are the same, as for "google-oauth2"),
        else its name, else id."""
        if self.kind == "user":
            return self.email or self.name or self.detail or self.id
        if self.kind == "organization":
            return self.display or self.name or self.id
        if self.kind == "connection" and self.name and self.detail and self.detail != self.name:
            return f"{self.name} ({self.detail})"
        return self.name or self.id

    @property
    def deleted(self) -> bool:
        return self.deleted_ms is not None


class Relation(StrEnum):
    """How two or three entities are linked (store/directory.py `Rel`, by name)."""

    ORG_MEMBER = "org_member"  # organization, user
    ORG_MEMBER_ROLE = "org_member_role"  # organization, user, role
    ORG_CONNECTION = "org_connection"  # organization, connection
    ORG_GROUP_ROLE = "org_group_role"  # organization, group, role
    GROUP_MEMBER = "group_member"  # group, user
    GROUP_ROLE = "group_role"  # group, role
    GROUP_CONNECTION_MEMBER = "group_connection_member"  # group, connection


@dataclass(frozen=True, slots=True)
class Link:
    """A membership or role assignment: its ends in the relation's order, since when, and whether it holds now.

    `until_ms` is the newest removal, or the deletion of an end (the service removes a deleted user from its
    organizations and groups without sending events), whichever is later; None while it holds.
    """

    relation: Relation
    ends: tuple[Entity, ...]
    since_ms: int | None
    until_ms: int | None

    @property
    def current(self) -> bool:
        return self.until_ms is None and self.since_ms is not None

    def other(self, kind: str, entity_id: str) -> tuple[Entity, ...]:
        """The ends that are not the given entity."""
        return tuple(e for e in self.ends if (e.kind, e.id) != (kind, entity_id))


@dataclass(frozen=True, slots=True)
class EntityState:
    """An entity and the links it is an end of (current ones first), as of the directory's watermark.

    `upto_seq` is the last stored event the directory covers; events after it (a catch-up not yet indexed) are
    not counted here.
    """

    entity: Entity
    links: tuple[Link, ...]
    upto_seq: int
    ended_total: int = 0  # ended links in all; `links` holds only the newest of them (entity_state.MAX_ENDED)

    @property
    def current_links(self) -> tuple[Link, ...]:
        return tuple(link for link in self.links if link.current)
