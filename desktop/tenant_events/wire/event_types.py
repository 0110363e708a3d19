"""The 22 event type names of the event stream, grouped into the families the UI colours by.

The names are the allowed values of `event_type` and of the envelope's `type`. Families are the first dotted
segment (`user`, `group`, `organization`), which is how the real service's catalogue groups them.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final


class EventType(StrEnum):
    """One event type name; the value is the wire name."""

    GROUP_CREATED = "group.created"
    GROUP_DELETED = "group.deleted"
    GROUP_UPDATED = "group.updated"
    GROUP_MEMBER_ADDED = "group.member.added"
    GROUP_MEMBER_DELETED = "group.member.deleted"
    GROUP_ROLE_ASSIGNED = "group.role.assigned"
    GROUP_ROLE_DELETED = "group.role.deleted"
    ORGANIZATION_CREATED = "organization.created"
    ORGANIZATION_DELETED = "organization.deleted"
    ORGANIZATION_UPDATED = "organization.updated"
    ORGANIZATION_CONNECTION_ADDED = "organization.connection.added"
    ORGANIZATION_CONNECTION_REMOVED = "organization.connection.removed"
    ORGANIZATION_CONNECTION_UPDATED = "organization.connection.updated"
    ORGANIZATION_GROUP_ROLE_ASSIGNED = "organization.group.role.assigned"
    ORGANIZATION_GROUP_ROLE_DELETED = "organization.group.role.deleted"
    ORGANIZATION_MEMBER_ADDED = "organization.member.added"
    ORGANIZATION_MEMBER_DELETED = "organization.member.deleted"
    ORGANIZATION_MEMBER_ROLE_ASSIGNED = "organization.member.role.assigned"
    ORGANIZATION_MEMBER_ROLE_DELETED = "organization.member.role.deleted"
    USER_CREATED = "user.created"
    USER_DELETED = "user.deleted"
    USER_UPDATED = "user.updated"

    @property
    def family(self) -> str:
        """`user`, `group` or `organization`."""
        return self.value.split(".", 1)[0]


ALL_EVENT_TYPES: Final[tuple[EventType, ...]] = tuple(EventType)
EVENT_TYPE_NAMES: Final[frozenset[str]] = frozenset(t.value for t in EventType)
FAMILIES: Final[tuple[str, ...]] = ("user", "organization", "group")

# Defaults for desktop notifications: what an administrator must not miss.
DEFAULT_NOTIFY_TYPES: Final[frozenset[EventType]] = frozenset(
    t for t in EventType if t.value.endswith((".deleted", ".removed", ".role.assigned"))
)
DEFAULT_NOTIFY_NAMES: Final[frozenset[str]] = frozenset(t.value for t in DEFAULT_NOTIFY_TYPES)


def types_in_family(family: str) -> tuple[EventType, ...]:
    """Event types whose name starts with `family.`, in the order `EventType` lists them."""
    return tuple(t for t in EventType if t.family == family)
