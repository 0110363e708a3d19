"""A snapshot cut by what it is about: per organization (its members, their roles, its groups' roles, its
connections), per group (its members and roles) and per user (every membership and role), each grant phrased from
that side (access/words.py). The window's tree, the command's text and the report are made from these."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from tenant_events.access.records import Grant, GrantKind
from tenant_events.access.review import sort_key
from tenant_events.access.words import seen_from
from tenant_events.alerts.access_state import admin_like
from tenant_events.store.entity_records import Entity

KINDS: Final = ("organization", "group", "user")
# Under which entities each kind of grant is listed (a grant through a group is listed under the group as its
# membership and its role, not again).
_UNDER: Final = {
    GrantKind.ORG_MEMBER: ("organization", "user"),
    GrantKind.ORG_ROLE: ("organization", "user"),
    GrantKind.ORG_CONNECTION: ("organization",),
    GrantKind.ORG_GROUP_ROLE: ("organization", "group"),
    GrantKind.GROUP_MEMBER: ("group", "user"),
    GrantKind.GROUP_CONNECTION: ("group",),
    GrantKind.GROUP_ROLE: ("group",),
    GrantKind.ORG_ROLE_THROUGH_GROUP: ("organization", "user"),
    GrantKind.ROLE_THROUGH_GROUP: ("user",),
}


@dataclass
class Section:
    """One organization, group or user and its grants, each with its phrase from that side."""

    entity: Entity
    lines: list[tuple[str, Grant]] = field(default_factory=list)


def _line_key(grant: Grant) -> tuple[object, ...]:
    """Admin-like roles first, then the other roles, then memberships and connections."""
    rank = 0 if grant.role is not None and admin_like(grant.role.name) else 1 if grant.kind.is_role else 2
    return (rank, *sort_key(grant))


def sections(grants: Iterable[Grant]) -> dict[str, list[Section]]:
    """{"organization": [...], "group": [...], "user": [...]}, each by name."""
    found: dict[tuple[str, str], Section] = {}
    for grant in sorted(grants, key=_line_key):
        for kind in _UNDER[grant.kind]:
            entity = getattr(grant, kind)
            if entity is None:
                continue
            section = found.setdefault((kind, entity.id), Section(entity))
            section.lines.append((seen_from(grant, entity), grant))
    out: dict[str, list[Section]] = {kind: [] for kind in KINDS}
    for (kind, _id), section in found.items():
        out[kind].append(section)
    for kind in KINDS:
        out[kind].sort(key=lambda s: (s.entity.label.casefold(), s.entity.id))
    return out
