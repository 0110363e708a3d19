"""The simulated tenant's world: users, organizations and groups kept consistent, and O(1) picks from them.

generator.py's `TenantLife` decides which event happens next and builds its payload from these; every pick is
from a `Bag`, so a million-event backlog stays fast.
"""

from __future__ import annotations

import random
from typing import Any

from tenant_events.simulator.bag import Bag
from tenant_events.simulator.world import ADMIN_ROLE_NAMES, ALNUM, CONNECTIONS, ROLE_NAMES, Group, Org


class TenantWorld:
    """What exists in the tenant right now; a seeded `rng` makes every run with one seed the same."""

    def __init__(self, seed: int | str, tenant_id: str, *, tenant_seed: int | str | None = None) -> None:
        self.rng = random.Random(seed)
        self.tenant_id = tenant_id
        self.users: dict[str, dict[str, Any]] = {}
        self.user_bag: Bag[str] = Bag()
        self.user_orgs: dict[str, set[str]] = {}
        self.user_groups: dict[str, set[str]] = {}
        self.orgs: dict[str, Org] = {}
        self.org_bag: Bag[str] = Bag()
        self.groups: dict[str, Group] = {}
        self.group_bag: Bag[str] = Bag()
        # The tenant's roles and connections keep their ids for the tenant's life (`tenant_seed`: a restarted
        # simulator's new seed makes new users and organizations, not a second "acme-saml"). The draws from `rng`
        # stay, so a seed's sequence of events is what it was.
        stable = random.Random(f"{seed if tenant_seed is None else tenant_seed}:tenant")

        def stable_id(prefix: str) -> str:
            self._chars(16)
            return f"{prefix}_{''.join(stable.choices(ALNUM, k=16))}"

        self.roles = [(stable_id("rol"), n) for n in ROLE_NAMES]
        self.role_names = dict(self.roles)
        # routine: live traffic without what alert rules look for (scenarios.py); grantable: roles picked from
        self.routine = False
        self.grantable = self.roles
        self.actor: tuple[str, str, str] | None = (
            None  # (client id, name, IP) making every change; None: anyone
        )
        self.connections = [(stable_id("con"), n, s) for n, s in CONNECTIONS]  # (id, name, strategy)
        self.connection_named = {c[1]: c for c in self.connections}

    def _grantable(self) -> list[tuple[str, str]]:
        return [r for r in self.grantable if r[1] not in ADMIN_ROLE_NAMES] if self.routine else self.grantable

    def _chars(self, n: int, alphabet: str = ALNUM) -> str:
        return "".join(self.rng.choices(alphabet, k=n))

    def _org_ref(self, org: Org, *, with_name: bool = True) -> dict[str, Any]:
        return {"id": org.id, "name": org.name} if with_name else {"id": org.id}

    def _group_ref(self, g: Group) -> dict[str, Any]:
        ref: dict[str, Any] = {"id": g.id, "type": g.kind, "name": g.name}
        if g.kind == "organization":
            ref["organization_id"] = g.parent
        elif g.kind == "connection":
            ref["connection_id"] = g.parent
        return ref

    def _role(self, role_id: str, *, with_name: bool = True) -> dict[str, Any]:
        return {"id": role_id, "name": self.role_names[role_id]} if with_name else {"id": role_id}

    def _any_org(self) -> Org | None:
        org_id = self.org_bag.pick(self.rng)
        return None if org_id is None else self.orgs[org_id]

    def _any_group(self) -> Group | None:
        group_id = self.group_bag.pick(self.rng)
        return None if group_id is None else self.groups[group_id]

    def _user_outside(self, members: Bag[str]) -> str | None:
        for _ in range(4):
            user_id = self.user_bag.pick(self.rng)
            if user_id is not None and user_id not in members:
                return user_id
        return None

    def _drop_group(self, g: Group) -> None:
        for user_id in g.members:
            self.user_groups.get(user_id, set()).discard(g.id)
        if g.kind == "organization" and g.parent in self.orgs:
            self.orgs[g.parent].groups.discard(g.id)
        del self.groups[g.id]
        self.group_bag.discard(g.id)
