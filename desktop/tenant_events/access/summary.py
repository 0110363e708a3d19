"""The counts at the head of an answer: how many organizations, groups and users hold access, how many grants,
roles and admin-like roles; for a diff, how many changes of each kind."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from tenant_events.access.records import ChangeKind, Diff, Snapshot
from tenant_events.alerts.access_state import admin_like


@dataclass(frozen=True, slots=True)
class Counts:
    organizations: int
    groups: int
    users: int
    grants: int
    roles: int  # grants of a role, directly or through a group
    admin_like: int  # of those, of an admin-like role
    connections: int  # organizations' connections


def counts(snapshot: Snapshot) -> Counts:
    seen: dict[str, set[str]] = {"organization": set(), "group": set(), "user": set()}
    for grant in snapshot.grants:
        for entity in grant.entities:
            if entity.kind in seen:
                seen[entity.kind].add(entity.id)
    roles = [g for g in snapshot.grants if g.kind.is_role]
    return Counts(
        len(seen["organization"]),
        len(seen["group"]),
        len(seen["user"]),
        len(snapshot.grants),
        len(roles),
        sum(1 for g in roles if g.role is not None and admin_like(g.role.name)),
        sum(1 for g in snapshot.grants if g.kind.value == "organization connection"),
    )


def amount(n: int, word: str) -> str:
    """`1 user`, `2 users`, `1,234 grants`."""
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def counts_line(snapshot: Snapshot) -> str:
    c = counts(snapshot)
    return (
        f"{amount(c.grants, 'grant')}: {amount(c.roles, 'role')} ({c.admin_like:,} admin-like), "
        f"{amount(c.connections, 'connection')}; {amount(c.organizations, 'organization')}, "
        f"{amount(c.groups, 'group')}, {amount(c.users, 'user')}"
    )


def change_counts(diff: Diff) -> dict[ChangeKind, int]:
    found = Counter(c.kind for c in diff.changes)
    return {kind: found[kind] for kind in ChangeKind}


def change_counts_line(diff: Diff) -> str:
    return f"{amount(len(diff.changes), 'change')}: " + ", ".join(
        f"{n:,} {kind.value}" for kind, n in change_counts(diff).items()
    )
