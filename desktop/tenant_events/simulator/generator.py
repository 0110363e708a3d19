"""Seeded, consistent tenant life: which event happens next and its `data` payload.

The world (users, organizations with members/connections/roles, groups with members/roles) is kept in memory
so every event refers to things that exist: a member is only removed if it was added, a deleted user leaves
every organization and group first, and so on. Payload shapes follow event-stream.md §5 (the Management API
OAS) with `data.context` filled as the vendor SDK's models require (event-stream.md §11: `context.tenant.id`,
`geo` inside `context.request`).
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tenant_events.simulator.event_types import EVENT_TYPES

_ALNUM = string.ascii_letters + string.digits
_GROUP_ALPHABET = (
    "123456789abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ"  # event-stream.md §5 grp_ pattern
)
_FIRST = ("Ada", "Alan", "Grace", "Linus", "Barbara", "Ken", "Margaret", "Dennis", "Radia", "Tim", "Frances")
_LAST = ("Lovelace", "Turing", "Hopper", "Torvalds", "Liskov", "Thompson", "Hamilton", "Ritchie", "Perlman")
_ROLE_NAMES = ("admin", "auditor", "billing", "developer", "support", "viewer")
_CONNECTIONS = (("Username-Password-Authentication", "auth0"), ("google-oauth2", "google-oauth2"),
                ("acme-saml", "samlp"), ("email", "email"))  # fmt: skip
_GEO = {"country_code": "DE", "country_name": "Germany", "city_name": "Berlin", "continent_code": "EU",
        "latitude": 52.52, "longitude": 13.40, "time_zone": "Europe/Berlin"}  # fmt: skip


def iso_ms(ts: float) -> str:
    """RFC 3339 UTC with milliseconds, as the live service writes `time` (event-stream.md §4)."""
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


@dataclass
class _Org:
    id: str
    name: str
    display_name: str
    members: set[str] = field(default_factory=set)
    connections: set[str] = field(default_factory=set)
    member_roles: set[tuple[str, str]] = field(default_factory=set)
    group_roles: set[tuple[str, str]] = field(default_factory=set)


@dataclass
class _Group:
    id: str
    name: str
    kind: str  # tenant | organization | connection
    parent: str | None
    created_at: str
    members: set[str] = field(default_factory=set)
    roles: set[str] = field(default_factory=set)


class TenantLife:
    """Produces (event type, data) pairs; `next_event(now)` never breaks the world's consistency."""

    def __init__(self, seed: int | str, tenant_id: str) -> None:
        self.rng = random.Random(seed)
        self.tenant_id = tenant_id
        self.users: dict[str, dict[str, Any]] = {}
        self.orgs: dict[str, _Org] = {}
        self.groups: dict[str, _Group] = {}
        self.roles = [(f"rol_{self._chars(16)}", n) for n in _ROLE_NAMES]
        self.connections = [(f"con_{self._chars(16)}", n, s) for n, s in _CONNECTIONS]
        self._actions: list[tuple[str, int, Callable[[str], dict[str, Any] | None]]] = [
            ("user.created", 14, self._user_created),
            ("user.updated", 12, self._user_updated),
            ("user.deleted", 3, self._user_deleted),
            ("organization.created", 3, self._org_created),
            ("organization.updated", 2, self._org_updated),
            ("organization.deleted", 1, self._org_deleted),
            ("organization.member.added", 8, self._org_member_added),
            ("organization.member.deleted", 3, self._org_member_deleted),
            ("organization.member.role.assigned", 5, self._org_member_role_assigned),
            ("organization.member.role.deleted", 2, self._org_member_role_deleted),
            ("organization.connection.added", 2, self._org_connection_added),
            ("organization.connection.updated", 2, self._org_connection_updated),
            ("organization.connection.removed", 1, self._org_connection_removed),
            ("organization.group.role.assigned", 2, self._org_group_role_assigned),
            ("organization.group.role.deleted", 1, self._org_group_role_deleted),
            ("group.created", 3, self._group_created),
            ("group.updated", 2, self._group_updated),
            ("group.deleted", 1, self._group_deleted),
            ("group.member.added", 6, self._group_member_added),
            ("group.member.deleted", 2, self._group_member_deleted),
            ("group.role.assigned", 3, self._group_role_assigned),
            ("group.role.deleted", 1, self._group_role_deleted),
        ]
        assert {a[0] for a in self._actions} == set(EVENT_TYPES)
        self._weights = [a[1] for a in self._actions]
        self._now = ""

    # ------------------------------------------------------------------ driving
    def next_event(self, now: float, types: tuple[str, ...] | None = None) -> tuple[str, dict[str, Any]]:
        """The next event; with `types`, the next one of those types (making prerequisites happen silently)."""
        self._now = iso_ms(now)
        for _ in range(64):
            if types:
                name = self.rng.choice(types)
                action = next(a for a in self._actions if a[0] == name)
            else:
                action = self.rng.choices(self._actions, self._weights)[0]
            obj = action[2](self._now)
            if obj is None and types:
                self._make_possible(action[0])
                obj = action[2](self._now)
            if obj is not None:
                return action[0], {"object": obj, "context": self._context()}
        return "user.created", {"object": self._user_created(self._now), "context": self._context()}

    def _make_possible(self, name: str) -> None:
        """Silently create what `name` needs (used when a test asks for specific types)."""
        if not self.users or name.startswith(("organization.member", "group.member")):
            self._user_created(self._now)
        if not self.orgs or name.startswith("organization."):
            self._org_created(self._now)
        if not self.groups or name.startswith(("group.", "organization.group")):
            self._group_created(self._now)
        if name.startswith("organization.member"):
            self._org_member_added(self._now)
        if name.startswith("organization.connection"):
            self._org_connection_added(self._now)
        if name.endswith("role.deleted"):
            if name.startswith("organization.member"):
                self._org_member_role_assigned(self._now)
            elif name.startswith("organization.group"):
                self._org_group_role_assigned(self._now)
            else:
                self._group_role_assigned(self._now)
        if name == "group.member.deleted":
            self._group_member_added(self._now)

    def _context(self) -> dict[str, Any]:
        ctx: dict[str, Any] = {"tenant": {"id": self.tenant_id, "tenant_id": self.tenant_id}}
        if self.rng.random() < 0.5:
            ctx["request"] = {
                "geo": _GEO,
                "hostname": "demo-tenant.sim.local",
                "ip": f"203.0.113.{self.rng.randrange(1, 255)}",
                "method": "POST",
                "user_agent": "tenant-simulator/1.0",
            }
            ctx["client"] = {"id": "tenant-events-service", "name": "Demo service", "metadata": {}}
        return ctx

    # ------------------------------------------------------------------ helpers
    def _chars(self, n: int, alphabet: str = _ALNUM) -> str:
        return "".join(self.rng.choices(alphabet, k=n))

    def _pick(self, items: Any) -> Any:
        seq = list(items)
        return self.rng.choice(seq) if seq else None

    def _org_ref(self, org: _Org, *, with_name: bool = True) -> dict[str, Any]:
        return {"id": org.id, "name": org.name} if with_name else {"id": org.id}

    def _group_ref(self, g: _Group) -> dict[str, Any]:
        ref: dict[str, Any] = {"id": g.id, "type": g.kind, "name": g.name}
        if g.kind == "organization":
            ref["organization_id"] = g.parent
        elif g.kind == "connection":
            ref["connection_id"] = g.parent
        return ref

    def _role(self, role_id: str, *, with_name: bool = True) -> dict[str, Any]:
        name = dict(self.roles)[role_id]
        return {"id": role_id, "name": name} if with_name else {"id": role_id}

    # ------------------------------------------------------------------ users
    def _user_created(self, now: str) -> dict[str, Any]:
        first, last = self.rng.choice(_FIRST), self.rng.choice(_LAST)
        local = self._chars(24, "0123456789abcdef")
        con_name = self.connections[0][1]
        email = f"{first.lower()}.{last.lower()}.{local[:4]}@example.com"
        user: dict[str, Any] = {
            "user_id": f"auth0|{local}",
            "email": email,
            "email_verified": self.rng.random() < 0.6,
            "name": f"{first} {last}",
            "nickname": first.lower(),
            "given_name": first,
            "family_name": last,
            "picture": f"https://example.com/avatars/{local[:8]}.png",
            "identities": [
                {"connection": con_name, "user_id": local, "provider": "auth0", "isSocial": False}
            ],
            "created_at": now,
            "updated_at": now,
            "logins_count": 0,
        }
        self.users[user["user_id"]] = user
        return dict(user)

    def _user_updated(self, now: str) -> dict[str, Any] | None:
        user_id = self._pick(self.users)
        if user_id is None:
            return None
        user = self.users[user_id]
        user["updated_at"] = now
        change = self.rng.randrange(3)
        if change == 0:
            user["email_verified"] = True
        elif change == 1:
            user["logins_count"] = int(user["logins_count"]) + 1
            user["last_login"] = now
        else:
            user["blocked"] = not user.get("blocked", False)
        return dict(user)

    def _user_deleted(self, now: str) -> dict[str, Any] | None:
        user_id = self._pick(self.users)
        if user_id is None:
            return None
        # Consistency: a deleted user leaves its organizations and groups (no events; the service cascades).
        for org in self.orgs.values():
            org.members.discard(user_id)
            org.member_roles = {mr for mr in org.member_roles if mr[0] != user_id}
        for g in self.groups.values():
            g.members.discard(user_id)
        user = self.users.pop(user_id)
        return {**user, "deleted_at": now}

    # ------------------------------------------------------------------ organizations
    def _org_created(self, now: str) -> dict[str, Any]:
        word = self.rng.choice(("acme", "globex", "initech", "umbrella", "hooli", "stark", "wayne"))
        suffix = self._chars(4, string.ascii_lowercase + string.digits)
        org = _Org(
            id=f"org_{self._chars(16)}", name=f"{word}-{suffix}", display_name=f"{word.title()} {suffix}"
        )
        self.orgs[org.id] = org
        return {"id": org.id, "name": org.name, "display_name": org.display_name, "metadata": {"tier": "gold"},
                "branding": {"colors": {"primary": "#0059d6", "page_background": "#000000"}}}  # fmt: skip

    def _org_updated(self, now: str) -> dict[str, Any] | None:
        org = self._pick(self.orgs.values())
        if org is None:
            return None
        org.display_name = f"{org.display_name.split(' (')[0]} ({self._chars(3, string.digits)})"
        return {"id": org.id, "name": org.name, "display_name": org.display_name, "metadata": {"tier": "gold"},
                "branding": {"colors": {"primary": "#0059d6", "page_background": "#000000"}}}  # fmt: skip

    def _org_deleted(self, now: str) -> dict[str, Any] | None:
        if len(self.orgs) < 2:
            return None
        org = self.orgs.pop(self._pick(self.orgs))
        for g in [g for g in self.groups.values() if g.parent == org.id]:
            del self.groups[g.id]
        return {
            "id": org.id,
            "name": org.name,
            "display_name": org.display_name,
            "metadata": {"tier": "gold"},
        }

    def _org_member_added(self, now: str) -> dict[str, Any] | None:
        org = self._pick(self.orgs.values())
        if org is None:
            return None
        user_id = self._pick(set(self.users) - org.members)
        if user_id is None:
            return None
        org.members.add(user_id)
        return {"organization": self._org_ref(org), "user": {"user_id": user_id}}

    def _org_member_deleted(self, now: str) -> dict[str, Any] | None:
        org = self._pick(o for o in self.orgs.values() if o.members)
        if org is None:
            return None
        user_id = self._pick(org.members)
        org.members.discard(user_id)
        org.member_roles = {mr for mr in org.member_roles if mr[0] != user_id}
        return {"organization": self._org_ref(org), "user": {"user_id": user_id}}

    def _org_member_role_assigned(self, now: str) -> dict[str, Any] | None:
        org = self._pick(o for o in self.orgs.values() if o.members)
        if org is None:
            return None
        user_id, (role_id, _n) = self._pick(org.members), self.rng.choice(self.roles)
        if (user_id, role_id) in org.member_roles:
            return None
        org.member_roles.add((user_id, role_id))
        return {"organization": self._org_ref(org, with_name=False), "user": {"user_id": user_id},
                "role": self._role(role_id)}  # fmt: skip

    def _org_member_role_deleted(self, now: str) -> dict[str, Any] | None:
        org = self._pick(o for o in self.orgs.values() if o.member_roles)
        if org is None:
            return None
        user_id, role_id = self._pick(sorted(org.member_roles))
        org.member_roles.discard((user_id, role_id))
        return {"organization": self._org_ref(org, with_name=False), "user": {"user_id": user_id},
                "role": self._role(role_id)}  # fmt: skip

    def _org_connection_added(self, now: str) -> dict[str, Any] | None:
        org = self._pick(self.orgs.values())
        if org is None:
            return None
        con = self._pick(c for c in self.connections if c[0] not in org.connections)
        if con is None:
            return None
        org.connections.add(con[0])
        return {"organization": self._org_ref(org), "connection": {"id": con[0]},
                "assign_membership_on_login": self.rng.random() < 0.5, "show_as_button": True,
                "is_signup_enabled": False}  # fmt: skip

    def _org_connection_updated(self, now: str) -> dict[str, Any] | None:
        org = self._pick(o for o in self.orgs.values() if o.connections)
        if org is None:
            return None
        return {"organization": self._org_ref(org), "connection": {"id": self._pick(sorted(org.connections))},
                "assign_membership_on_login": self.rng.random() < 0.5, "show_as_button": self.rng.random() < 0.5,
                "is_signup_enabled": self.rng.random() < 0.3}  # fmt: skip

    def _org_connection_removed(self, now: str) -> dict[str, Any] | None:
        org = self._pick(o for o in self.orgs.values() if o.connections)
        if org is None:
            return None
        con_id = self._pick(sorted(org.connections))
        org.connections.discard(con_id)
        return {"organization": self._org_ref(org), "connection": {"id": con_id}}

    def _org_group_role_assigned(self, now: str) -> dict[str, Any] | None:
        g = self._pick(g for g in self.groups.values() if g.kind == "organization")
        if g is None or g.parent not in self.orgs:
            return None
        org, (role_id, _n) = self.orgs[g.parent], self.rng.choice(self.roles)
        if (g.id, role_id) in org.group_roles:
            return None
        org.group_roles.add((g.id, role_id))
        return {"organization": {"id": org.id}, "group": self._group_ref(g), "role": self._role(role_id),
                "created_at": now}  # fmt: skip

    def _org_group_role_deleted(self, now: str) -> dict[str, Any] | None:
        org = self._pick(o for o in self.orgs.values() if o.group_roles)
        if org is None:
            return None
        group_id, role_id = self._pick(sorted(org.group_roles))
        org.group_roles.discard((group_id, role_id))
        g = self.groups.get(group_id)
        group = (
            self._group_ref(g) if g else {"id": group_id, "type": "organization", "organization_id": org.id}
        )
        return {"organization": {"id": org.id}, "group": group, "role": self._role(role_id, with_name=False),
                "deleted_at": now}  # fmt: skip

    # ------------------------------------------------------------------ groups
    def _group_obj(self, g: _Group, now: str | None) -> dict[str, Any]:
        obj = self._group_ref(g)
        obj["created_at"] = g.created_at
        if now is not None:
            obj["updated_at"] = now
        return obj

    def _group_created(self, now: str) -> dict[str, Any]:
        kind = self.rng.choice(("tenant", "organization", "connection"))
        parent: str | None = None
        if kind == "organization":
            org = self._pick(self.orgs.values())
            parent = org.id if org else None
            kind = kind if org else "tenant"
        elif kind == "connection":
            parent = self.rng.choice(self.connections)[0]
        name = f"{self.rng.choice(('eng', 'ops', 'sales', 'legal', 'hr'))}-{self._chars(4, string.digits)}"
        g = _Group(f"grp_{self._chars(self.rng.randrange(14, 23), _GROUP_ALPHABET)}", name, kind, parent, now)
        self.groups[g.id] = g
        return self._group_obj(g, None)

    def _group_updated(self, now: str) -> dict[str, Any] | None:
        g = self._pick(self.groups.values())
        if g is None:
            return None
        g.name = f"{g.name.split('~')[0]}~{self._chars(2, string.digits)}"
        return self._group_obj(g, now)

    def _group_deleted(self, now: str) -> dict[str, Any] | None:
        if len(self.groups) < 2:
            return None
        g = self.groups.pop(self._pick(self.groups))
        for org in self.orgs.values():
            org.group_roles = {gr for gr in org.group_roles if gr[0] != g.id}
        return self._group_obj(g, now)

    def _group_member_added(self, now: str) -> dict[str, Any] | None:
        g = self._pick(self.groups.values())
        if g is None:
            return None
        user_id = self._pick(set(self.users) - g.members)
        if user_id is None:
            return None
        g.members.add(user_id)
        return {"group": self._group_ref(g), "member": {"member_type": "user", "id": user_id}}

    def _group_member_deleted(self, now: str) -> dict[str, Any] | None:
        g = self._pick(g for g in self.groups.values() if g.members)
        if g is None:
            return None
        user_id = self._pick(sorted(g.members))
        g.members.discard(user_id)
        return {"group": self._group_ref(g), "member": {"member_type": "user", "id": user_id}}

    def _group_role_assigned(self, now: str) -> dict[str, Any] | None:
        g, (role_id, _n) = self._pick(self.groups.values()), self.rng.choice(self.roles)
        if g is None or role_id in g.roles:
            return None
        g.roles.add(role_id)
        return {"group": self._group_ref(g), "role": self._role(role_id), "created_at": now}

    def _group_role_deleted(self, now: str) -> dict[str, Any] | None:
        g = self._pick(g for g in self.groups.values() if g.roles)
        if g is None:
            return None
        role_id = self._pick(sorted(g.roles))
        g.roles.discard(role_id)
        return {"group": self._group_ref(g), "role": self._role(role_id, with_name=False), "deleted_at": now}
