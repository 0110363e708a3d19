"""The 22 event type names of the contract, written out again here so the simulator shares no code
with the client's `wire` package (a typo there must not be mirrored here)."""

from __future__ import annotations

from typing import Final

EVENT_TYPES: Final[tuple[str, ...]] = (
    "group.created",
    "group.deleted",
    "group.updated",
    "group.member.added",
    "group.member.deleted",
    "group.role.assigned",
    "group.role.deleted",
    "organization.created",
    "organization.deleted",
    "organization.updated",
    "organization.connection.added",
    "organization.connection.removed",
    "organization.connection.updated",
    "organization.group.role.assigned",
    "organization.group.role.deleted",
    "organization.member.added",
    "organization.member.deleted",
    "organization.member.role.assigned",
    "organization.member.role.deleted",
    "user.created",
    "user.deleted",
    "user.updated",
)
TYPE_INDEX: Final[dict[str, int]] = {name: i for i, name in enumerate(EVENT_TYPES)}
