"""Seeded, consistent tenant life: which event happens next and its `data` payload.

The world (users, organizations with members/connections/roles, groups with members/roles) is kept in memory
so every event refers to things that exist: a member is only removed if it was added, a deleted user leaves
every organization and group first, and so on. Populations are capped (creation turns into deletion past the
cap) and every pick is O(1), so a million-event backlog takes seconds. Payload shapes follow
docs/event-stream.md "Payloads" (the Management API's schemas) with `data.context` filled as the vendor SDK's models require
(docs/event-stream.md "Quirks": `context.tenant.id`, `geo` inside `context.request`).
"""

from __future__ import annotations

import string
from collections import deque
from collections.abc import Callable, Sized
from typing import Any

from tenant_events.simulator.event_types import EVENT_TYPES
from tenant_events.simulator.group_life import GroupLife
from tenant_events.simulator.world import (
    CAPS,
    CLIENTS,
    FIRST,
    GEO,
    LAST,
    ORG_BRANDING,
    ROUTINE_DELETIONS_PER_MINUTE,
    ROUTINE_SIGNUPS_PER_MINUTE,
    SENSITIVE_TYPES,
    SIGNUP_CONNECTION,
    Org,
    iso_ms,
)

Action = Callable[[str], dict[str, Any] | None]

_MASS_DELETED = (
    "user.deleted",
    "group.deleted",
    "organization.deleted",
)  # what the mass deletion rule counts


class TenantLife(GroupLife):
    """Produces (event type, data) pairs; `next_event(now)` never breaks the world's consistency."""

    def __init__(self, seed: int | str, tenant_id: str, *, tenant_seed: int | str | None = None) -> None:
        super().__init__(seed, tenant_id, tenant_seed=tenant_seed)
        table: list[tuple[str, int, Action]] = [
            ("user.created", 14, self._user_created), ("user.updated", 12, self._user_updated),
            ("user.deleted", 3, self._user_deleted),
            ("organization.created", 3, self._org_created), ("organization.updated", 2, self._org_updated),
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
            ("group.created", 3, self._group_created), ("group.updated", 2, self._group_updated),
            ("group.deleted", 1, self._group_deleted),
            ("group.member.added", 6, self._group_member_added),
            ("group.member.deleted", 2, self._group_member_deleted),
            ("group.role.assigned", 3, self._group_role_assigned),
            ("group.role.deleted", 1, self._group_role_deleted),
        ]  # fmt: skip
        assert {a[0] for a in table} == set(EVENT_TYPES)
        self._actions = {name: fn for name, _w, fn in table}
        self._names = [name for name, _w, _f in table]
        self._cum_weights = []
        total = 0
        for _name, weight, _fn in table:
            total += weight
            self._cum_weights.append(total)
        self.made: list[
            tuple[str, dict[str, Any]]
        ] = []  # the last next_event's prerequisites (_make_possible)
        self._signups: deque[float] = deque()  # times of routine sign-ups in the last tenant minute
        # times of routine deletions in the last tenant minute, by type (user, group, organization)
        self._deletions: dict[str, deque[float]] = {t: deque() for t in _MASS_DELETED}
        self._populations: dict[str, Sized] = {
            "user": self.users,
            "organization": self.orgs,
            "group": self.groups,
        }

    # ------------------------------------------------------------------ driving
    def next_event(self, now: float, types: tuple[str, ...] | None = None) -> tuple[str, dict[str, Any]]:
        """The next event; with `types`, the next one of those types (creating prerequisites first: their
        events are in `made` for a caller that shows them)."""
        stamp = iso_ms(now)
        self.made = []
        for _ in range(64):
            if types:
                name = self.rng.choice(types)
            else:
                name = self.rng.choices(self._names, cum_weights=self._cum_weights)[0]
                family, _, verb = name.rpartition(".")
                if verb == "created" and len(self._populations[family]) >= CAPS[family]:
                    name = family + (".updated" if self.routine else ".deleted")  # routine: no mass deletion
                if self.routine and name in SENSITIVE_TYPES:
                    continue
                if self.routine and name == "user.created" and not self._room_to_sign_up(now):
                    name = "user.updated"
                if self.routine and name in _MASS_DELETED and not self._room_to_delete(name, now):
                    name = family + ".updated"
            obj = self._actions[name](stamp)
            if obj is None and types:
                self._make_possible(name, stamp)
                obj = self._actions[name](stamp)
            if obj is not None:
                if self.routine and name == "user.created":
                    self._signups.append(now)
                if self.routine and name in _MASS_DELETED:
                    self._deletions[name].append(now)
                return name, {"object": obj, "context": self._context(name, obj)}
        obj = self._user_created(stamp)
        return "user.created", {"object": obj, "context": self._context("user.created", obj)}

    def _room_to_delete(self, name: str, now: float) -> bool:
        """Whether a routine deletion of this type now stays within ROUTINE_DELETIONS_PER_MINUTE (a wave of them
        is a scenario's)."""
        times = self._deletions[name]
        while times and times[0] <= now - 60:
            times.popleft()
        return len(times) < ROUTINE_DELETIONS_PER_MINUTE

    def _room_to_sign_up(self, now: float) -> bool:
        """Whether a routine sign-up now stays within ROUTINE_SIGNUPS_PER_MINUTE (a burst is a scenario's)."""
        while self._signups and self._signups[0] <= now - 60:
            self._signups.popleft()
        return len(self._signups) < ROUTINE_SIGNUPS_PER_MINUTE

    def _make_possible(self, name: str, now: str) -> list[tuple[str, dict[str, Any]]]:
        """Create what `name` needs (only when a caller asks for specific types); returns the events that did it,
        in order, for a caller that shows them (a scenario: the service would have sent them), and keeps them in
        `made` until the next event."""
        made: list[tuple[str, dict[str, Any]]] = []

        def do(event_type: str, action: Callable[[], dict[str, Any] | None]) -> None:
            if (obj := action()) is not None:
                made.append((event_type, obj))

        if not self.users or name.startswith(("organization.member", "group.member")):
            do("user.created", lambda: self._user_created(now))
        if not self.orgs or name.startswith("organization."):
            do("organization.created", lambda: self._org_created(now))
        if len(self.groups) < 2 or name.startswith(("group.", "organization.group")):
            kind = "organization" if name.startswith("organization.group") else None
            do("group.created", lambda: self._group_created(now, kind=kind))
        prerequisite = {
            "organization.member.deleted": "organization.member.added",
            "organization.member.role.assigned": "organization.member.added",
            "organization.member.role.deleted": "organization.member.role.assigned",
            "organization.connection.updated": "organization.connection.added",
            "organization.connection.removed": "organization.connection.added",
            "organization.group.role.deleted": "organization.group.role.assigned",
            "group.member.deleted": "group.member.added",
            "group.role.deleted": "group.role.assigned",
        }.get(name)
        if name == "organization.member.role.deleted":
            do("organization.member.added", lambda: self._org_member_added(now))
        if prerequisite is not None:
            do(prerequisite, lambda: self._actions[prerequisite](now))
        self.made += made
        return made

    def _context(self, name: str = "", obj: dict[str, Any] | None = None) -> dict[str, Any]:
        ctx: dict[str, Any] = {"tenant": {"id": self.tenant_id, "tenant_id": self.tenant_id}}
        if (connection := self._flow_connection(name, obj or {})) is not None:
            con_id, con_name, strategy = connection
            ctx["connection"] = {"id": con_id, "name": con_name, "strategy": strategy}
        if self.actor is not None:
            client_id, client_name, ip = self.actor
        elif self.rng.random() < 0.5:
            octet = self.rng.randrange(1, 255)
            (client_id, client_name), ip = CLIENTS[octet % len(CLIENTS)], f"203.0.113.{octet}"
        else:
            return ctx
        ctx["request"] = {"geo": GEO, "hostname": "demo-tenant.sim.local", "ip": ip, "method": "POST",
                          "user_agent": "tenant-simulator/1.0"}  # fmt: skip
        ctx["client"] = {"id": client_id, "name": client_name, "metadata": {}}
        return ctx

    def _flow_connection(self, name: str, obj: dict[str, Any]) -> tuple[str, str, str] | None:
        """The connection a user's sign-up or log-in went through (the service's `context.connection`): the
        user's first identity's, for a user created or an update that is a log-in; None for other changes."""
        if name not in ("user.created", "user.updated") or not obj.get("identities"):
            return None
        if name == "user.updated" and obj.get("last_login") != obj.get("updated_at"):
            return None
        return self.connection_named.get(str(obj["identities"][0].get("connection")))

    # ------------------------------------------------------------------ users
    def _user_created(self, now: str) -> dict[str, Any]:
        first, last = self.rng.choice(FIRST), self.rng.choice(LAST)
        local = self._chars(24, "0123456789abcdef")
        _con_id, con_name, strategy = self.connections[int(SIGNUP_CONNECTION[int(local[1], 16)])]
        subject = (
            str(int(local[:14], 16)) if strategy == "google-oauth2" else local
        )  # Google's ids are numbers
        provider_id = f"samlp|{con_name}|{subject}" if strategy == "samlp" else f"{strategy}|{subject}"
        user: dict[str, Any] = {
            "user_id": provider_id,
            "email": f"{first.lower()}.{last.lower()}.{local[:4]}@example.com",
            # one database sign-up in fifty waits for its address to be verified: at most a few in five minutes
            # even in a burst, far below a wave of unverified sign-ups (the draw stays, so a seed's events do)
            "email_verified": self.rng.random() < 0.98 or strategy != "auth0",
            "name": f"{first} {last}", "nickname": first.lower(), "given_name": first, "family_name": last,
            "picture": f"https://example.com/avatars/{local[:8]}.png",
            "identities": [{"connection": con_name, "user_id": subject, "provider": strategy,
                            "isSocial": strategy == "google-oauth2"}],
            "created_at": now, "updated_at": now, "logins_count": 0,
        }  # fmt: skip
        self.users[user["user_id"]] = user
        self.user_bag.add(user["user_id"])
        return dict(user)

    def _user_updated(self, now: str) -> dict[str, Any] | None:
        user_id = self.user_bag.pick(self.rng)
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
        user_id = self.user_bag.pick(self.rng)
        if user_id is None:
            return None
        # A deleted user leaves its organizations and groups (the service cascades without events).
        for org_id in self.user_orgs.pop(user_id, set()):
            org = self.orgs[org_id]
            org.members.discard(user_id)
            org.member_roles.pop(user_id, None)
        for group_id in self.user_groups.pop(user_id, set()):
            self.groups[group_id].members.discard(user_id)
        self.user_bag.discard(user_id)
        return {**self.users.pop(user_id), "deleted_at": now}

    # ------------------------------------------------------------------ organizations
    def _org_object(self, org: Org, *, branding: bool = True) -> dict[str, Any]:
        obj: dict[str, Any] = {"id": org.id, "name": org.name, "display_name": org.display_name,
                               "metadata": {"tier": "gold"}}  # fmt: skip
        if branding:
            obj["branding"] = ORG_BRANDING
        return obj

    def _org_created(self, now: str) -> dict[str, Any]:
        word = self.rng.choice(("acme", "globex", "initech", "umbrella", "hooli", "stark", "wayne"))
        suffix = self._chars(4, string.ascii_lowercase + string.digits)
        org = Org(
            id=f"org_{self._chars(16)}",
            name=f"{word}-{suffix}",
            display_name=f"{word.title()} {_division(suffix)}",
        )
        self.orgs[org.id] = org
        self.org_bag.add(org.id)
        return self._org_object(org)

    def _org_updated(self, now: str) -> dict[str, Any] | None:
        org = self._any_org()
        if org is None:
            return None
        company, _, division = org.display_name.partition(" ")
        draw = self._chars(3, string.digits)  # a rename as a person makes one: another division's name
        org.display_name = f"{company} {_division(draw, not_this=division)}"
        return self._org_object(org)

    def _org_deleted(self, now: str) -> dict[str, Any] | None:
        org = self._any_org()
        if org is None or len(self.orgs) < 2:
            return None
        for user_id in org.members:
            self.user_orgs.get(user_id, set()).discard(org.id)
        # sorted: dropped in a set's order, the group bag's order (and every later pick) would follow the
        # process's string hashing, and one seed would not make one tenant life
        for group_id in sorted(org.groups):
            self._drop_group(self.groups[group_id])
        del self.orgs[org.id]
        self.org_bag.discard(org.id)
        return self._org_object(org, branding=False)  # the real payloads: no branding on deleted

    def _org_member_added(self, now: str) -> dict[str, Any] | None:
        org = self._any_org()
        user_id = None if org is None else self._user_outside(org.members)
        if org is None or user_id is None:
            return None
        org.members.add(user_id)
        self.user_orgs.setdefault(user_id, set()).add(org.id)
        return {"organization": self._org_ref(org), "user": {"user_id": user_id}}

    def _org_member_deleted(self, now: str) -> dict[str, Any] | None:
        org = self._any_org()
        user_id = None if org is None else org.members.pick(self.rng)
        if org is None or user_id is None:
            return None
        org.members.discard(user_id)
        org.member_roles.pop(user_id, None)
        self.user_orgs.get(user_id, set()).discard(org.id)
        return {"organization": self._org_ref(org), "user": {"user_id": user_id}}

    def _org_member_role_assigned(self, now: str) -> dict[str, Any] | None:
        org = self._any_org()
        user_id = None if org is None else org.members.pick(self.rng)
        if org is None or user_id is None:
            return None
        role_id = self.rng.choice(self._grantable())[0]
        held = org.member_roles.setdefault(user_id, set())
        if role_id in held:
            return None
        held.add(role_id)
        return {"organization": self._org_ref(org, with_name=False), "user": {"user_id": user_id},
                "role": self._role(role_id)}  # fmt: skip

    def _org_member_role_deleted(self, now: str) -> dict[str, Any] | None:
        org = self._any_org()
        user_id = None if org is None else org.members.pick(self.rng)
        held = org.member_roles.get(user_id or "") if org is not None else None
        if org is None or user_id is None or not held:
            return None
        role_id = self.rng.choice(sorted(held))
        held.discard(role_id)
        return {"organization": self._org_ref(org, with_name=False), "user": {"user_id": user_id},
                "role": self._role(role_id)}  # fmt: skip

    def _org_connection_added(self, now: str) -> dict[str, Any] | None:
        org = self._any_org()
        if org is None:
            return None
        free = [c for c in self.connections if c[0] not in org.connections]
        if not free:
            return None
        con_id = self.rng.choice(free)[0]
        org.connections.add(con_id)
        return {"organization": self._org_ref(org), "connection": {"id": con_id},
                "assign_membership_on_login": self.rng.random() < 0.5, "show_as_button": True,
                "is_signup_enabled": False}  # fmt: skip

    def _org_connection_updated(self, now: str) -> dict[str, Any] | None:
        org = self._any_org()
        if org is None or not org.connections:
            return None
        return {"organization": self._org_ref(org), "connection": {"id": self.rng.choice(sorted(org.connections))},
                "assign_membership_on_login": self.rng.random() < 0.5, "show_as_button": self.rng.random() < 0.5,
                "is_signup_enabled": self.rng.random() < 0.3}  # fmt: skip

    def _org_connection_removed(self, now: str) -> dict[str, Any] | None:
        org = self._any_org()
        if org is None or not org.connections:
            return None
        con_id = self.rng.choice(sorted(org.connections))
        org.connections.discard(con_id)
        return {"organization": self._org_ref(org), "connection": {"id": con_id}}

    def _org_group_role_assigned(self, now: str) -> dict[str, Any] | None:
        g = self._any_group()
        if g is None or g.kind != "organization" or g.parent not in self.orgs:
            return None
        role_id = self.rng.choice(self._grantable())[0]
        if role_id in g.org_roles:
            return None
        g.org_roles.add(role_id)
        return {"organization": {"id": g.parent}, "group": self._group_ref(g), "role": self._role(role_id),
                "created_at": now}  # fmt: skip

    def _org_group_role_deleted(self, now: str) -> dict[str, Any] | None:
        g = self._any_group()
        if g is None or not g.org_roles:
            return None
        role_id = self.rng.choice(sorted(g.org_roles))
        g.org_roles.discard(role_id)
        return {"organization": {"id": g.parent}, "group": self._group_ref(g),
                "role": self._role(role_id, with_name=False), "deleted_at": now}  # fmt: skip


DIVISIONS = ("Europe", "Labs", "Retail", "Health", "Logistics", "Bank", "Studios", "Cloud", "Energy", "Partners",
             "Americas", "Research", "Insurance", "Foods", "Mobility", "Asia Pacific")  # fmt: skip


def _division(draw: str, not_this: str = "") -> str:
    """A division's name picked by characters already drawn (a seeded demo's events stay the same)."""
    pick = sum(map(ord, draw))
    name = DIVISIONS[pick % len(DIVISIONS)]
    return DIVISIONS[(pick + 1) % len(DIVISIONS)] if name == not_this else name
