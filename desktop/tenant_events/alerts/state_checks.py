"""A rule's state checks answered from the entity directory (store/directory.py) when an event is evaluated.

    group_holds_admin_role   the group the event names holds an admin-like role now (a tenant role, or an
                             organization role through the organization)
    group_held_admin_role    the group held one up to this event (a group.deleted: what it took away)
    user_is_org_admin        the user the event names has an admin-like role in the event's organization now
    connection_added_within  the connection the event names was added to the event's organization within
                             `minutes` before the event

Live, the directory holds every committed event (it is kept in the batch's transaction); during a large
catch-up the evaluator brings it up to the last event of each chunk it evaluates (evaluator.py), so a check
sees at least everything up to the event it is asked about. Answers are cached while the directory stays put
(one chunk of at most a few thousand events).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from tenant_events.alerts.rule_parts import StateCheck
from tenant_events.store.alert_records import EvalRow
from tenant_events.store.entity_reader import DirectoryReader
from tenant_events.store.entity_records import Link, Relation

ADMIN_LIKE: Final = ("admin", "owner", "superuser")
_MINUTE_MS: Final = 60_000
# The links each check reads: a busy group's thousands of memberships are never loaded to find its roles.
_GROUP_ROLES: Final = frozenset({Relation.GROUP_ROLE, Relation.ORG_GROUP_ROLE})
_MEMBER_ROLES: Final = frozenset({Relation.ORG_MEMBER_ROLE})
_CONNECTION_LINKS: Final = frozenset({Relation.ORG_CONNECTION})


def admin_like(name: str | None) -> bool:
    folded = (name or "").casefold()
    return any(word in folded for word in ADMIN_LIKE)


def _id(data: Mapping[str, Any], *path: str) -> str | None:
    value: Any = data.get("object")
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, str) and value else None


def _admin_role(links: Iterable[Link]) -> bool:
    """Whether one of a group's role links gives it an admin-like role."""
    return any(
        link.relation in (Relation.GROUP_ROLE, Relation.ORG_GROUP_ROLE)
        and any(e.kind == "role" and admin_like(e.name) for e in link.ends)
        for link in links
    )


class DirectoryState:
    """The state test (compiled_rule.StateTest) over one directory, for one step."""

    def __init__(self, directory: DirectoryReader) -> None:
        self._directory = directory
        self._cache: dict[tuple[str, ...], bool] = {}

    def __call__(self, state: StateCheck, row: EvalRow, data: Mapping[str, Any]) -> bool:
        check = state.check
        if check in ("group_holds_admin_role", "group_held_admin_role"):
            group = _id(data, "group", "id") or (_id(data, "id") if row.type.startswith("group.") else None)
            if group is None:
                return False
            held = check == "group_held_admin_role"
            return self._cached(
                ("g", group, str(held)), lambda: self._group_admin(group, row.time_ms if held else None)
            )
        if check == "user_is_org_admin":
            org, user = _id(data, "organization", "id"), _id(data, "user", "user_id")
            if org is None or user is None:
                return False
            return self._cached(("u", org, user), lambda: self._org_admin(org, user))
        return self._connection_added(row, data, state.minutes or 60.0)

    def prefetch_groups(self, groups: Iterable[str]) -> None:
        """Answer "holds an admin-like role now" for these groups in a few queries (the groups a chunk of events
        names), instead of a few queries for each when it is asked."""
        wanted = [g for g in groups if ("g", g, "False") not in self._cache]
        if not wanted:
            return
        found = self._directory.current_links_of("group", wanted, _GROUP_ROLES)
        for group in wanted:
            links = found.get(group)
            self._cache["g", group, "False"] = links is not None and _admin_role(links)

    def _connection_added(self, row: EvalRow, data: Mapping[str, Any], minutes: float) -> bool:
        org, con = _id(data, "organization", "id"), _id(data, "connection", "id")
        if not (org and con):
            return False
        state = self._directory.state("connection", con, _CONNECTION_LINKS)
        if state is None:
            return False
        for link in state.current_links:
            if link.relation is Relation.ORG_CONNECTION and any(e.id == org for e in link.ends):
                since = link.since_ms
                return since is not None and row.time_ms - since <= minutes * _MINUTE_MS
        return False

    def _cached(self, key: tuple[str, ...], answer: Any) -> bool:
        hit = self._cache.get(key)
        if hit is None:
            hit = self._cache[key] = bool(answer())
        return hit

    def _group_admin(self, group: str, until_ms: int | None) -> bool:
        """Whether the group holds an admin-like role now, or (`until_ms`) held one up to that moment."""
        links: Sequence[Link] | None
        if until_ms is None:  # (asked for each group.member.added: its ended links are never needed)
            links = self._directory.current_links("group", group, _GROUP_ROLES)
        else:
            state = self._directory.state("group", group, _GROUP_ROLES)
            links = None
            if state is not None:
                links = [
                    k
                    for k in state.links
                    if k.since_ms is not None and (k.until_ms is None or k.until_ms >= until_ms)
                ]
        return links is not None and _admin_role(links)

    def _org_admin(self, org: str, user: str) -> bool:
        state = self._directory.state("user", user, _MEMBER_ROLES)
        if state is None:
            return False
        return any(
            link.relation is Relation.ORG_MEMBER_ROLE
            and any(e.id == org for e in link.ends)
            and any(e.kind == "role" and admin_like(e.name) for e in link.ends)
            for link in state.current_links
        )
