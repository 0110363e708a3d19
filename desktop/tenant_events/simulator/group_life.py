"""The simulated tenant's group events: groups made, renamed and deleted, their members and roles.

A part of the tenant's life (generator.py) kept apart by subject; it reads and changes the same world.
"""

from __future__ import annotations

import string
from typing import Any

from tenant_events.simulator.tenant_world import TenantWorld
from tenant_events.simulator.world import GROUP_ALPHABET, Group


class GroupLife(TenantWorld):
    """Payloads of the group.* events, each consistent with the world (None: not possible now)."""

    def _group_obj(self, g: Group, now: str | None) -> dict[str, Any]:
        obj = self._group_ref(g)
        obj["created_at"] = g.created_at
        if now is not None:
            obj["updated_at"] = now
        return obj

    def _group_created(self, now: str, kind: str | None = None) -> dict[str, Any]:
        kind = kind or self.rng.choice(("tenant", "organization", "connection"))
        parent: str | None = None
        if kind == "organization":
            org = self._any_org()
            parent, kind = (org.id, kind) if org else (None, "tenant")
        elif kind == "connection":
            parent = self.rng.choice(self.connections)[0]
        name = f"{self.rng.choice(('eng', 'ops', 'sales', 'legal', 'hr'))}-{self._chars(4, string.digits)}"
        g = Group(f"grp_{self._chars(self.rng.randrange(14, 23), GROUP_ALPHABET)}", name, kind, parent, now)
        self.groups[g.id] = g
        self.group_bag.add(g.id)
        if kind == "organization" and parent is not None:
            self.orgs[parent].groups.add(g.id)
        return self._group_obj(g, None)

    def _group_updated(self, now: str) -> dict[str, Any] | None:
        g = self._any_group()
        if g is None:
            return None
        draw = self._chars(
            2, string.digits
        )  # a rename as a person makes one: "eng-2986" becomes "eng-platform"
        team = g.name.split("-")[0]
        areas = [a for a in TEAM_AREAS if f"{team}-{a}" != g.name]
        g.name = f"{team}-{areas[int(draw) % len(areas)]}"
        return self._group_obj(g, now)

    def _group_deleted(self, now: str) -> dict[str, Any] | None:
        g = self._any_group()
        if g is None or len(self.groups) < 2:
            return None
        self._drop_group(g)
        return self._group_obj(g, now)

    def _group_member_added(self, now: str) -> dict[str, Any] | None:
        g = self._any_group()
        user_id = None if g is None else self._user_outside(g.members)
        if g is None or user_id is None:
            return None
        g.members.add(user_id)
        self.user_groups.setdefault(user_id, set()).add(g.id)
        return {"group": self._group_ref(g), "member": {"member_type": "user", "id": user_id}}

    def _group_member_deleted(self, now: str) -> dict[str, Any] | None:
        g = self._any_group()
        user_id = None if g is None else g.members.pick(self.rng)
        if g is None or user_id is None:
            return None
        g.members.discard(user_id)
        self.user_groups.get(user_id, set()).discard(g.id)
        return {"group": self._group_ref(g), "member": {"member_type": "user", "id": user_id}}

    def _group_role_assigned(self, now: str) -> dict[str, Any] | None:
        g = self._any_group()
        role_id = self.rng.choice(self._grantable())[0]
        if g is None or role_id in g.roles:
            return None
        g.roles.add(role_id)
        return {"group": self._group_ref(g), "role": self._role(role_id), "created_at": now}

    def _group_role_deleted(self, now: str) -> dict[str, Any] | None:
        g = self._any_group()
        if g is None or not g.roles:
            return None
        role_id = self.rng.choice(sorted(g.roles))
        g.roles.discard(role_id)
        return {"group": self._group_ref(g), "role": self._role(role_id, with_name=False), "deleted_at": now}


TEAM_AREAS = (
    "platform",
    "emea",
    "oncall",
    "payroll",
    "contracts",
    "mobile",
    "partners",
    "support",
    "infra",
    "apac",
    "recruiting",
    "compliance",
)
