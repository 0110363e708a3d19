"""The review's answers: access held at a moment (`Snapshot`), what changed between two (`Diff`), and how complete
each is (`Completeness`). Plain records the CLI prints and the window shows; entities carry the names the event
table shows (store/entity_records.py `Entity.label`)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from tenant_events.entities.sentences import Sentence
from tenant_events.store.access_records import GapWindow
from tenant_events.store.entity_records import Entity


class GrantKind(StrEnum):
    """What a grant is; the value is its name in CSV and JSON lines."""

    ORG_MEMBER = "organization member"
    ORG_ROLE = "organization role"
    ORG_CONNECTION = "organization connection"
    ORG_GROUP_ROLE = "organization group role"
    GROUP_MEMBER = "group member"
    GROUP_CONNECTION = "group connection"
    GROUP_ROLE = "group role"
    ORG_ROLE_THROUGH_GROUP = "organization role through group"
    ROLE_THROUGH_GROUP = "role through group"

    @property
    def is_role(self) -> bool:
        return self in _ROLES

    @property
    def through_group(self) -> bool:
        return self in (GrantKind.ORG_ROLE_THROUGH_GROUP, GrantKind.ROLE_THROUGH_GROUP)


_ROLES = frozenset(
    {
        GrantKind.ORG_ROLE,
        GrantKind.ORG_GROUP_ROLE,
        GrantKind.GROUP_ROLE,
        GrantKind.ORG_ROLE_THROUGH_GROUP,
        GrantKind.ROLE_THROUGH_GROUP,
    }
)


@dataclass(frozen=True, slots=True)
class Grant:
    """One piece of access at a moment: a membership, a role (held directly, or by a user through a group's role)
    or a connection. `group` of a grant through a group is the group it comes through; `seq` is the event that
    began it (of a grant through a group, the later of the membership and the group's role)."""

    kind: GrantKind
    since_ms: int | None  # None: since before the first stored event (only its removal is stored)
    seq: int
    organization: Entity | None = None
    group: Entity | None = None
    user: Entity | None = None
    role: Entity | None = None
    connection: Entity | None = None
    event_id: str | None = None  # None once the event is no longer stored

    @property
    def entities(self) -> tuple[Entity, ...]:
        ends = (self.organization, self.group, self.user, self.role, self.connection)
        return tuple(e for e in ends if e is not None)

    @property
    def key(self) -> tuple[str, ...]:
        """What makes it the same grant at another moment: its kind and its entities' ids."""
        return (self.kind.value, *(f"{e.kind}:{e.id}" for e in self.entities))


@dataclass(frozen=True, slots=True)
class Completeness:
    """How complete an answer is: the history is complete from `first_ms` (the first stored event), `gaps` are the
    possible gaps inside the range asked about, `behind` stored events are still being indexed."""

    first_ms: int | None
    newest_ms: int | None
    gaps: tuple[GapWindow, ...] = ()
    behind: int = 0

    def knows(self, moment_ms: int) -> bool:
        """Whether the history can say anything about `moment_ms`: not before its first event."""
        return self.first_ms is not None and moment_ms >= self.first_ms


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Access in one tenant at `at_ms` (None: now, every stored event counted). `known` False: the moment lies
    before the first stored event, and `grants` is empty because nothing can be said, not because nobody had
    access."""

    tenant: str
    at_ms: int | None
    grants: tuple[Grant, ...]
    completeness: Completeness
    known: bool = True


class ChangeKind(StrEnum):
    GRANTED = "granted"
    REMOVED = "removed"
    JOINED = "joined"
    LEFT = "left"
    CONNECTION_ADDED = "connection added"
    CONNECTION_REMOVED = "connection removed"


@dataclass(frozen=True, slots=True)
class Change:
    """A grant that began or ended between two moments, with the event that did it, its sentence as the event
    table shows it, and who did it (the client and IP address the event names; None when it names none)."""

    kind: ChangeKind
    grant: Grant
    at_ms: int
    seq: int
    event_id: str | None
    event_type: str | None
    sentence: Sentence | None
    client: str | None = None
    client_id: str | None = None
    ip: str | None = None


@dataclass(frozen=True, slots=True)
class Diff:
    """What changed in one tenant after `from_ms` up to `to_ms` (None: now). `known` False: `from_ms` lies before
    the first stored event, so the access then cannot be known and no change can be told."""

    tenant: str
    from_ms: int
    to_ms: int | None
    changes: tuple[Change, ...]
    completeness: Completeness
    known: bool = True
