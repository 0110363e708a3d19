"""An entity's state: the entity and its links, with the cascades the service performs without sending events.

A link (store/directory.py) ends at the first of: its own removal, the deletion of any end (a deleted user leaves
its organizations and groups), the deletion of the organization a group belongs to (its groups go with it), and,
for a role held in an organization, the member leaving that organization. SQLite works that out for every link
of the entity (a role can have tens of thousands); Python builds objects only for the links that hold now and
the most recently ended ones.
"""

from __future__ import annotations

import sqlite3
from typing import Final

import orjson

from tenant_events.store.directory import Rel
from tenant_events.store.entity_records import Entity, EntityState, Link, Relation, stamp_ms

# An entity row with its effective deletion (its organization's, for an organization's group).
ENTITY: Final = (
    "e.kind, e.id, e.name, e.display, e.email, e.detail, e.created_at,"
    " CASE WHEN p.deleted_at > coalesce(e.deleted_at, -1) THEN p.deleted_at ELSE e.deleted_at END"
)
_PARENT: Final = (
    " LEFT JOIN entities AS p ON e.kind = 'group' AND e.detail = 'organization' AND p.kind = 'organization'"
    " AND p.id = e.parent"
)
FROM: Final = f"entities AS e{_PARENT}"
FROM_KEYS: Final = (
    f"json_each(?) AS j CROSS JOIN entities AS e ON e.kind = j.value ->> 0 AND e.id = j.value ->> 1{_PARENT}"
)
# Each relation's ends in order: the kinds of links.a, .b and .c.
ENDS: Final[dict[Rel, tuple[str, ...]]] = {
    Rel.ORG_MEMBER: ("organization", "user"),
    Rel.ORG_MEMBER_ROLE: ("organization", "user", "role"),
    Rel.ORG_CONNECTION: ("organization", "connection"),
    Rel.ORG_GROUP_ROLE: ("organization", "group", "role"),
    Rel.GROUP_MEMBER: ("group", "user"),
    Rel.GROUP_ROLE: ("group", "role"),
    Rel.GROUP_CONNECTION_MEMBER: ("group", "connection"),
}
MAX_ENDED: Final = 200  # ended links an EntityState lists (the newest); the rest are counted
_HOLDS: Final = 2**62  # the ending stamp of a link that holds
_PARTIAL: Final = ("", "", " AND l.c <> ''")  # lets SQLite use links_c, which holds only three-ended links


def entity_from_row(row: tuple[object, ...]) -> Entity:
    kind, eid, name, display, email, detail, created_at, deleted_at = row
    created = created_at if isinstance(created_at, int) and created_at >= 0 else None
    deleted = deleted_at if isinstance(deleted_at, int) and deleted_at > (created or -1) else None
    return Entity(str(kind), str(eid), name, display, email, detail, stamp_ms(created), stamp_ms(deleted))  # type: ignore[arg-type]


def _ending(stamp: str) -> str:
    return f"CASE WHEN {stamp} > l.added_at THEN {stamp} ELSE {_HOLDS} END"


def _cascade_sql(rel: Rel, own: int) -> str:
    """A query for links of `rel` whose end `own` is the entity and that no removal ended: each row's first
    ending by cascade (or _HOLDS). Only the other ends are looked up (the entity's own deletion is applied once
    by the caller), a group's organization only for group ends, the membership only for a member's role."""
    joins, endings = [], ["l.removed_at"]
    for position, kind in enumerate(ENDS[rel]):
        if position == own:
            continue
        alias = f"e{position}"
        joins.append(
            f"LEFT JOIN entities AS {alias} ON {alias}.kind = '{kind}' AND {alias}.id = l.{'abc'[position]}"
        )
        endings.append(f"{alias}.deleted_at")
        if kind == "group":
            joins.append(f"LEFT JOIN entities AS {alias}p ON {alias}.detail = 'organization'"
                         f" AND {alias}p.kind = 'organization' AND {alias}p.id = {alias}.parent")  # fmt: skip
            endings.append(f"{alias}p.deleted_at")
    if rel is Rel.ORG_MEMBER_ROLE:  # the member left the organization: its roles there went too
        joins.append(
            f"LEFT JOIN links AS m ON m.rel = {int(Rel.ORG_MEMBER)} AND m.a = l.a AND m.b = l.b AND m.c = ''"
        )
        endings.append("m.removed_at")
    ended = "min(" + ", ".join(_ending(e) for e in endings) + ")" if len(endings) > 1 else _ending(endings[0])
    return (f"SELECT l.a, l.b, l.c, l.added_at, {ended} FROM links AS l {' '.join(joins)}"  # noqa: S608
            f" WHERE l.rel = {int(rel)} AND l.{'abc'[own]} = ?{_PARTIAL[own]} AND l.added_at IS NOT NULL"
            " AND NOT coalesce(l.removed_at > l.added_at, 0)")  # fmt: skip


def _links(
    conn: sqlite3.Connection, kind: str, entity_id: str, deleted: int | None
) -> list[tuple[Rel, list[str], int, int]]:
    """(relation, end ids, added stamp, first ending stamp or _HOLDS) of every link the entity is an end of."""
    out = []
    for rel, kinds in ENDS.items():
        for own, end_kind in enumerate(kinds):
            if end_kind != kind:
                continue
            column = "abc"[own]
            removed = conn.execute(
                f"SELECT a, b, c, added_at, removed_at FROM links AS l WHERE rel = ? AND {column} = ?"  # noqa: S608
                f"{_PARTIAL[own]} AND added_at IS NOT NULL AND removed_at > added_at",
                (int(rel), entity_id),
            )
            for rows in (removed, conn.execute(_cascade_sql(rel, own), (entity_id,))):
                for a, b, c, added, ended in rows:
                    if deleted is not None and added < deleted < ended:
                        ended = deleted  # the entity itself went
                    out.append((rel, [a, b, c][: len(kinds)], int(added), int(ended)))
    return out


def entity_state(conn: sqlite3.Connection, row: tuple[object, ...], upto: int) -> EntityState:
    """The state of the entity in `row` (an ENTITY row); call inside a read transaction."""
    entity = entity_from_row(row)
    deleted = (
        row[7] if isinstance(row[7], int) else None
    )  # its newest deletion stamp (entity_from_row drops it)
    links = _links(conn, entity.kind, entity.id, deleted)
    holding = [link for link in links if link[3] == _HOLDS]
    ended = sorted((link for link in links if link[3] != _HOLDS), key=lambda link: -link[3])
    shown = holding + ended[:MAX_ENDED]
    wanted = sorted({(k, i) for rel, ids, _a, _e in shown for k, i in zip(ENDS[rel], ids, strict=True)})
    found = {
        (str(r[0]), str(r[1])): entity_from_row(r)
        for r in conn.execute(f"SELECT {ENTITY} FROM {FROM_KEYS}", (orjson.dumps(wanted).decode(),))  # noqa: S608
    }
    out = []
    for rel, ids, added, ended_at in shown:
        ends = tuple(found.get((k, i)) or Entity(k, i) for k, i in zip(ENDS[rel], ids, strict=True))
        until = None if ended_at == _HOLDS else stamp_ms(ended_at)
        out.append(Link(Relation[rel.name], ends, stamp_ms(added), until))
    out.sort(key=lambda link: (not link.current, -(link.until_ms or link.since_ms or 0)))
    return EntityState(entity, tuple(out), upto, ended_total=len(ended))
