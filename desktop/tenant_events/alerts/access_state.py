"""Who holds an admin-like role and which connections an organization has, kept in memory from the events the
rules evaluate: the answers to a rule's state checks (rule_parts.StateCheck).

    group_holds_admin_role   the group the event names holds an admin-like role now (a tenant role, or an
                             organization role through the organization)
    group_held_admin_role    the group held one up to this event (a group.deleted: what it took away)
    user_is_org_admin        the user the event names has an admin-like role in the event's organization now
    connection_added_within  the connection the event names was added to the event's organization within
                             `minutes` before the event
    organization_created_within  the event's organization was created within `minutes` before the event
                             (organizations created in the last week of event time are kept; after a
                             restart only those created since)

Why not the entity directory (store/directory.py): during a catch-up the directory is left behind for the
idle-time indexer, and bringing it up to each chunk the rules evaluate cost more than the rules themselves
(bench/rules_cost.py: 17.5 s of a 1M-event catch-up). These few links are a small part of the directory: the
admin-like role links, and the organizations' connections.

The same rules as the directory's (store/entity_state.py): each link keeps the stamps of its newest add and
its newest ending (`time_ms << 20 | seq`, so arrival order does not matter), and ends at its removal, at the
deletion of an end, at the deletion of a group's organization, and (a role held in an organization) when the
member leaves it. Endings and deletions are kept for an hour of event time (an add delivered after the deletion
that ended it is ended too), then forgotten: an event delivered over an hour late may count a link as current
that the directory counts as ended. After a restart the state is read back from the directory and the stored
events it does not cover yet (evaluator.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from tenant_events.alerts.builtin_rules import ADMIN_LIKE
from tenant_events.alerts.rule_parts import StateCheck
from tenant_events.store.alert_records import EvalRow, HeldLink
from tenant_events.store.directory import STAMP_SHIFT, Rel

_MINUTE_MS: Final = 60_000
FORGET_AFTER_MS: Final = 3_600_000  # event time an ended link is kept for (late deliveries, "held until")
_SEQ_MASK: Final = (1 << STAMP_SHIFT) - 1
_GROUP_ROLES: Final = (Rel.GROUP_ROLE, Rel.ORG_GROUP_ROLE)

# Event types that change the state: link events, (relation, whether it adds); deletions and departures, what
# ends (an entity of that kind, or a member's place in an organization).
_LINKS: Final = {
    "group.role.assigned": (Rel.GROUP_ROLE, True),
    "group.role.deleted": (Rel.GROUP_ROLE, False),
    "organization.group.role.assigned": (Rel.ORG_GROUP_ROLE, True),
    "organization.group.role.deleted": (Rel.ORG_GROUP_ROLE, False),
    "organization.member.role.assigned": (Rel.ORG_MEMBER_ROLE, True),
    "organization.member.role.deleted": (Rel.ORG_MEMBER_ROLE, False),
    "organization.connection.added": (Rel.ORG_CONNECTION, True),
    "organization.connection.removed": (Rel.ORG_CONNECTION, False),
}
_ENDINGS: Final = {
    "user.deleted": "user",
    "group.deleted": "group",
    "organization.deleted": "organization",
    "organization.member.deleted": "member",
}
CREATED: Final = "organization.created"
TYPES: Final = frozenset(_LINKS) | frozenset(_ENDINGS) | {CREATED}
# The events each check's answer depends on. The role checks take in every link, deletion and departure (the
# state's sweeps, which forget what ended over an hour before its newest event, then come at the same events);
# a connection's addition needs only the connections and the organizations' deletions, an organization's
# creation only the creations. An engine takes in those of its rules' checks: a backtest of "organization
# created within" reads the organizations' creations, not every role change of the history.
NEEDS: Final[dict[str, frozenset[str]]] = {
    "group_holds_admin_role": TYPES,
    "group_held_admin_role": TYPES,
    "user_is_org_admin": TYPES,
    "connection_added_within": frozenset(
        {"organization.connection.added", "organization.connection.removed", "organization.deleted"}
    ),
    "organization_created_within": frozenset({CREATED}),
}


def types_for(checks: Iterable[str]) -> frozenset[str]:
    """The event types the state must take in to answer `checks`."""
    return frozenset().union(*(NEEDS[check] for check in checks))


KEEP_CREATED_MS: Final = 7 * 86_400_000  # the longest `minutes` a state check takes

Key = tuple[Rel, str, str, str]  # (relation, a, b, c) as store/directory.py's links table has them


def admin_like(name: str | None) -> bool:
    folded = (name or "").casefold()
    return any(word in folded for word in ADMIN_LIKE)


def _text(obj: Any, key: str) -> str | None:
    value = obj.get(key) if type(obj) is dict else None
    return value if type(value) is str and value else None


def _ref(obj: Any, key: str, field: str) -> str | None:
    """`obj[key][field]` when it is a non-empty string (a reference's id or name)."""
    ref = obj.get(key) if type(obj) is dict else None
    value = ref.get(field) if type(ref) is dict else None
    return value if type(value) is str and value else None


class AccessState:
    """The state test (compiled_rule.StateTest) over the links it has been given, by `apply` or `load`."""

    def __init__(self) -> None:
        self._links: dict[Key, list[int]] = {}  # key → [newest add stamp, newest ending stamp] (0: none)
        self._of: dict[tuple[str, str], set[Key]] = {}  # (kind, id) of an end → its links
        self._group_org: dict[str, str] = {}  # an organization's group (one with links) → the organization
        self._admin: dict[str, bool] = {}  # role id → whether its name is admin-like (roles are few)
        self._names: dict[str, str] = {}  # role id → the name that was judged
        self._gone: dict[tuple[str, str], int] = {}  # (kind, id) deleted, or ("member", org␟user) departed
        self._created: dict[str, int] = {}  # organization id → event time it was created
        self._newest_ms = 0
        self._applied = 0

    def __call__(self, state: StateCheck, row: EvalRow, data: Mapping[str, Any]) -> bool:
        check = state.check
        obj = data.get("object")
        if check in ("group_holds_admin_role", "group_held_admin_role"):
            group = _ref(obj, "group", "id") or (_text(obj, "id") if row.type.startswith("group.") else None)
            if group is None:
                return False
            keys = self._of.get(("group", group))
            if not keys:
                return False
            if check == "group_holds_admin_role":
                links = self._links
                for key in keys:
                    if key[0] in _GROUP_ROLES:
                        added, ended = links[key]
                        if added > ended:
                            return True
                return False
            return self._held(group, row.time_ms)
        org = _ref(obj, "organization", "id")
        if check == "organization_created_within":
            created = self._created.get(org or "")
            minutes = state.minutes or 30.0
            return created is not None and 0 <= row.time_ms - created <= minutes * _MINUTE_MS
        if check == "user_is_org_admin":
            user = _ref(obj, "user", "user_id")
            return any(
                k[0] is Rel.ORG_MEMBER_ROLE and k[1] == org and self._holds(k)
                for k in self._of.get(("user", user or ""), ())
            )
        con = _ref(obj, "connection", "id")
        link = self._links.get((Rel.ORG_CONNECTION, org or "", con or "", ""))
        if link is None or not link[0] > link[1]:
            return False
        return row.time_ms - (link[0] >> STAMP_SHIFT) <= (state.minutes or 60.0) * _MINUTE_MS

    def apply(self, event_type: str, time_ms: int, seq: int, data: Mapping[str, Any]) -> None:
        """Take in one event of TYPES (any order: stamps decide)."""
        obj = data.get("object")
        at = (time_ms << STAMP_SHIFT) | (seq & _SEQ_MASK)
        if time_ms > self._newest_ms:
            self._newest_ms = time_ms
        link = _LINKS.get(event_type)
        if link is not None:
            self._link(link[0], link[1], obj, at)
        elif event_type == CREATED:
            org = _text(obj, "id")
            if org is not None:
                self._created[org] = time_ms
        else:
            self._ending(_ENDINGS[event_type], obj, at)
        self._applied += 1
        if not self._applied & 4095:
            self.sweep()

    def load(self, links: Iterable[HeldLink]) -> None:
        """Links that hold in the entity directory (AlertLedger.access_links); role links of admin-like roles
        are kept."""
        for link in links:
            if link.rel is not Rel.ORG_CONNECTION:
                role = link.c or link.b
                admin = self._admin[role] = admin_like(link.role)
                if not admin:
                    continue
            self._add((link.rel, link.a, link.b, link.c), link.added, 0)
            if link.group_org:
                self._group_org[link.b if link.rel is Rel.ORG_GROUP_ROLE else link.a] = link.group_org

    def sweep(self) -> None:
        """Forget links that ended, and deletions made, over FORGET_AFTER_MS of event time before the newest
        event."""
        horizon = (self._newest_ms - FORGET_AFTER_MS) << STAMP_SHIFT
        for gone in [k for k, at in self._gone.items() if at < horizon]:
            del self._gone[gone]
        oldest = self._newest_ms - KEEP_CREATED_MS
        for org in [o for o, at in self._created.items() if at < oldest]:
            del self._created[org]
        for key in [k for k, (added, ended) in self._links.items() if added < ended < horizon]:
            del self._links[key]
            for end in self._ends(key):
                keys = self._of.get(end)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del self._of[end]
                        if end[0] == "group":
                            self._group_org.pop(end[1], None)

    def _link(self, rel: Rel, adds: bool, obj: Any, at: int) -> None:
        org = _ref(obj, "organization", "id") or ""
        if rel is Rel.ORG_CONNECTION:
            key: Key = (rel, org, _ref(obj, "connection", "id") or "", "")
        else:
            role = _ref(obj, "role", "id") or ""
            name = _ref(obj, "role", "name")  # (an assignment names the role, a removal need not)
            if name is not None:
                admin = self._admin.get(role)
                if admin is None or self._names.get(role) != name:
                    self._admin[role], self._names[role] = admin_like(name), name
            if not self._admin.get(role, False):
                return
            group = _ref(obj, "group", "id") or ""
            if rel is Rel.GROUP_ROLE:
                key = (rel, group, role, "")
            elif rel is Rel.ORG_GROUP_ROLE:
                key = (rel, org, group, role)
            else:
                key = (rel, org, _ref(obj, "user", "user_id") or "", role)
            parent = _ref(obj, "group", "organization_id")
            if group and parent and _ref(obj, "group", "type") == "organization":
                self._group_org[group] = parent
        if not all(key[1:3]) or (rel in (Rel.ORG_GROUP_ROLE, Rel.ORG_MEMBER_ROLE) and not key[3]):
            return
        self._add(key, at if adds else 0, 0 if adds else at)

    def _add(self, key: Key, added: int, ended: int) -> None:
        """A link's add or ending; an end deleted (or a member departed) before the add, but delivered first,
        ends it too."""
        gone = self._gone
        if gone:
            ends = self._ends(key)
            if key[0] is Rel.ORG_MEMBER_ROLE:
                ends.append(("member", f"{key[1]}\x1f{key[2]}"))
            for end in ends:
                if end[0] == "group" and end[1] in self._group_org:
                    ends.append(("organization", self._group_org[end[1]]))
            ended = max(ended, *(gone.get(end, 0) for end in ends))
        link = self._links.get(key)
        if link is None:
            self._links[key] = [added, ended]
            for end in self._ends(key):
                self._of.setdefault(end, set()).add(key)
        else:
            link[0], link[1] = max(link[0], added), max(link[1], ended)

    def _ending(self, kind: str, obj: Any, at: int) -> None:
        """A deletion ends the links of the entity (and of an organization's groups); a member leaving an
        organization ends the roles it held there."""
        if kind == "member":
            org, user = _ref(obj, "organization", "id"), _ref(obj, "user", "user_id")
            self._gone_at(("member", f"{org}\x1f{user}"), at)
            keys = self._of.get(("user", user or ""))
            if not keys:
                return
            ended = [k for k in keys if k[0] is Rel.ORG_MEMBER_ROLE and k[1] == org]
        else:
            ident = _text(obj, "user_id" if kind == "user" else "id") or ""
            self._gone_at((kind, ident), at)
            ended = list(self._of.get((kind, ident), ()))
            if kind == "organization" and self._group_org:
                for group in [g for g, o in self._group_org.items() if o == ident]:
                    ended.extend(self._of.get(("group", group), ()))
        links = self._links
        for key in ended:
            link = links[key]
            if at > link[1]:
                link[1] = at

    def _gone_at(self, key: tuple[str, str], at: int) -> None:
        gone = self._gone
        if at > gone.get(key, 0):
            gone[key] = at

    def _holds(self, key: Key) -> bool:
        added, ended = self._links[key]
        return added > ended

    def _held(self, group: str, time_ms: int) -> bool:
        """Whether an admin-like role link of the group held up to `time_ms` (ended then or later, or holds)."""
        for key in self._of.get(("group", group), ()):
            if key[0] in _GROUP_ROLES:
                added, ended = self._links[key]
                if added and (ended < added or ended >> STAMP_SHIFT >= time_ms):
                    return True
        return False

    @staticmethod
    def _ends(key: Key) -> list[tuple[str, str]]:
        """The ends a link is found by: the entities whose deletion ends it, and the groups and users asked
        about (never its role: a busy role has thousands of links)."""
        rel, a, b, _c = key
        if rel is Rel.GROUP_ROLE:
            return [("group", a)]
        if rel is Rel.ORG_GROUP_ROLE:
            return [("organization", a), ("group", b)]
        if rel is Rel.ORG_MEMBER_ROLE:
            return [("organization", a), ("user", b)]
        return [("organization", a)]
