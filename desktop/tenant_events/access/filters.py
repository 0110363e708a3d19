"""Narrowing a review: to one role (or every admin-like role), organization, group or user.

Each names an entity by its id or by a name the event table shows for it (an email, a name, a display name), in
any case. A role narrows to the grants of that role, held directly or through a group; an organization, group or
user to the grants that name it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Final

from tenant_events.access.records import Diff, Grant, Snapshot
from tenant_events.alerts.access_state import admin_like
from tenant_events.store.entity_records import Entity

ADMIN_LIKE: Final = "admin-like"  # the role filter's word for every admin-like role


def names(entity: Entity) -> set[str]:
    """What a filter may call the entity: its id, label, name, email and display name, folded."""
    said = (entity.id, entity.label, entity.name, entity.email, entity.display)
    return {s.casefold() for s in said if s}


def _named(entity: Entity | None, wanted: str | None) -> bool:
    return wanted is None or (entity is not None and wanted.casefold() in names(entity))


@dataclass(frozen=True, slots=True)
class AccessFilter:
    role: str | None = None  # a role's id or name, or ADMIN_LIKE
    organization: str | None = None
    group: str | None = None
    user: str | None = None

    def __bool__(self) -> bool:
        return any((self.role, self.organization, self.group, self.user))

    def keeps(self, grant: Grant) -> bool:
        if self.role is not None:
            if grant.role is None:
                return False
            if self.role.casefold() == ADMIN_LIKE:
                if not admin_like(grant.role.name):
                    return False
            elif not _named(grant.role, self.role):
                return False
        return (
            _named(grant.organization, self.organization)
            and _named(grant.group, self.group)
            and _named(grant.user, self.user)
        )

    def snapshot(self, snapshot: Snapshot) -> Snapshot:
        return replace(snapshot, grants=tuple(g for g in snapshot.grants if self.keeps(g)))

    def diff(self, diff: Diff) -> Diff:
        return replace(diff, changes=tuple(c for c in diff.changes if self.keeps(c.grant)))

    def described(self, grants: Iterable[Grant]) -> str:
        """The filters in words, each entity by the name the grants show for it: "role admin, organization Stark
        Industries"; "none: all access" when there are none."""
        chosen = (
            ("role", self.role),
            ("organization", self.organization),
            ("group", self.group),
            ("user", self.user),
        )
        labels = {(e.kind, e.id.casefold()): e.label for g in grants for e in g.entities}
        said = []
        for kind, value in chosen:
            if value is None:
                continue
            if kind == "role" and value.casefold() == ADMIN_LIKE:
                said.append("every admin-like role")
                continue
            label = labels.get((kind, value.casefold()), value)
            said.append(f"{kind} {label}" if label == value else f"{kind} {label} ({value})")
        return ", ".join(said) if said else "none: all access"

    def unmatched(self, grants: Iterable[Grant]) -> list[str]:
        """The options that name nothing among `grants` ("--org Stark": no grant names such an organization)."""
        seen: dict[str, set[str]] = {"organization": set(), "group": set(), "user": set(), "role": set()}
        for grant in grants:
            for entity in grant.entities:
                if entity.kind in seen:
                    seen[entity.kind] |= names(entity)
        out = []
        for kind, wanted in (("role", self.role), ("organization", self.organization), ("group", self.group),
                             ("user", self.user)):  # fmt: skip
            if wanted is None or (kind == "role" and wanted.casefold() == ADMIN_LIKE):
                continue
            if wanted.casefold() not in seen[kind]:
                out.append(f"no {kind} {wanted!r}")
        return out


def roles_first_admin_like(grants: Iterable[Grant]) -> list[Entity]:
    """The roles the grants name, admin-like ones first, then by name (the role filter's choices)."""
    roles = {g.role.id: g.role for g in grants if g.role is not None}
    return sorted(roles.values(), key=lambda r: (not admin_like(r.name), r.label.casefold(), r.id))
