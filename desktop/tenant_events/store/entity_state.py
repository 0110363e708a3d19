"""An entity's state: the entity and its links, with the cascades the service performs without sending events.

A link (store/directory.py) ends at the first of: its own removal, the deletion of any end (a deleted user leaves
its organizations and groups), the deletion of the organization a group belongs to (its groups go with it), and,
for a role held in an organization, the member leaving that organization. A busy role of a 1M-event store has
~15,000 links, nearly all ended: SQLite finds the few that hold with checks that stop at the first ending found,
and works out the endings of the most recently made ones only; Python builds objects for those alone.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Collection
from typing import Final, NamedTuple

import orjson

from tenant_events.store.directory import Rel
from tenant_events.store.directory_settled import (
    NOTHING,
    SettledDirectory,
    entity_rows,
    links_of,
    merged,
    own_deletions,
)
from tenant_events.store.entity_records import Entity, EntityState, Link, Relation, stamp_ms

# An entity row with its effective deletion (its organization's, for an organization's group).
ENTITY: Final = (
    "e.kind, e.id, e.name, e.display, e.email, e.detail, e.created_at,"
    " CASE WHEN p.deleted_at > coalesce(e.deleted_at, -1) THEN p.deleted_at ELSE e.deleted_at END,"
    " e.name_at, e.display_at, e.email_at, e.detail_at"
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
    kind, eid, name, display, email, detail, created_at, deleted_at, *set_at = row
    created = created_at if isinstance(created_at, int) and created_at >= 0 else None
    deleted = deleted_at if isinstance(deleted_at, int) and deleted_at > (created or -1) else None
    stamps = tuple(s if isinstance(s, int) else None for s in set_at)
    name_, display_, email_, detail_ = (
        t if isinstance(t, str) else None for t in (name, display, email, detail)
    )
    return Entity(
        str(kind), str(eid), name_, display_, email_, detail_, stamp_ms(created), stamp_ms(deleted), stamps
    )


def _ending(stamp: str) -> str:
    return f"CASE WHEN {stamp} > l.added_at THEN {stamp} ELSE {_HOLDS} END"


class _Ending(NamedTuple):
    """Something that can end a link: a LEFT JOIN and its stamp (for the ending's time), or the same as a
    NOT EXISTS condition (for "does it still hold")."""

    join: str
    stamp: str
    ended: str


def _endings(rel: Rel, own: int) -> list[_Ending]:
    """What can end a link of `rel` seen from end `own`: the membership first (a member's role: the commonest),
    then the other ends' deletions and, for a group, its organization's. The removal itself and the entity's own
    deletion are handled by the callers."""
    out = []
    if rel is Rel.ORG_MEMBER_ROLE:
        on = f"m.rel = {int(Rel.ORG_MEMBER)} AND m.a = l.a AND m.b = l.b AND m.c = ''"
        exists = f"SELECT 1 FROM links AS m WHERE {on} AND m.removed_at > l.added_at"  # noqa: S608 - constants
        out.append(_Ending(f"LEFT JOIN links AS m ON {on}", "m.removed_at", exists))
    for position, kind in enumerate(ENDS[rel]):
        if position == own:
            continue
        e = f"e{position}"
        on = f"{e}.kind = '{kind}' AND {e}.id = l.{'abc'[position]}"
        exists = f"SELECT 1 FROM entities AS {e} WHERE {on} AND {e}.deleted_at > l.added_at"  # noqa: S608
        out.append(_Ending(f"LEFT JOIN entities AS {e} ON {on}", f"{e}.deleted_at", exists))
        if kind == "group":
            parent = f"{e}p.kind = 'organization' AND {e}p.id = {e}.parent"
            join = f"LEFT JOIN entities AS {e}p ON {e}.detail = 'organization' AND {parent}"
            exists = (
                f"SELECT 1 FROM entities AS {e} JOIN entities AS {e}p ON {parent} WHERE {on}"  # noqa: S608
                f" AND {e}.detail = 'organization' AND {e}p.deleted_at > l.added_at"
            )
            out.append(_Ending(join, f"{e}p.deleted_at", exists))
    return out


def _where(rel: Rel, own: int) -> str:
    """The links of `rel` whose end `own` is the bound id."""
    return f" WHERE l.rel = {int(rel)} AND l.{'abc'[own]} = ?{_PARTIAL[own]} AND l.added_at IS NOT NULL"


@functools.cache
def _count_sql(rel: Rel, own: int) -> str:
    return f"SELECT count(*) FROM links AS l{_where(rel, own)}"  # noqa: S608 - constants only


@functools.cache  # (the statements are constants: made once, not per state asked for)
def _holding_sql(rel: Rel, own: int) -> str:
    """Links that hold now: each ending is its own NOT EXISTS, so SQLite stops at the first that applies (most
    links of a busy role ended long ago)."""
    checks = " ".join(f"AND NOT EXISTS ({e.ended})" for e in _endings(rel, own))
    return (
        f"SELECT l.a, l.b, l.c, l.added_at FROM links AS l{_where(rel, own)}"  # noqa: S608 - constants
        f" AND NOT coalesce(l.removed_at > l.added_at, 0) {checks}"
    )


def _first_ending(rel: Rel, own: int) -> tuple[str, str]:
    """The stamp a link first ended at (or _HOLDS), and the joins it reads."""
    endings = _endings(rel, own)
    ended = "min(" + ", ".join(_ending(s) for s in ["l.removed_at", *(e.stamp for e in endings)]) + ")"
    return ended, " ".join(e.join for e in endings)


@functools.cache
def _recent_sql(rel: Rel, own: int) -> str:
    """The most recently made links (LIMIT ?) with their first ending (or _HOLDS)."""
    ended, joins = _first_ending(rel, own)
    return (
        f"SELECT l.a, l.b, l.c, l.added_at, {ended} FROM links AS l {joins}{_where(rel, own)}"  # noqa: S608
        " ORDER BY l.added_at DESC LIMIT ?"
    )


@functools.cache
def ended_sql(rel: Rel) -> str:
    """Every link of `rel` with an add: rel, a, b, c, its add and removal stamps and the stamp it first ended at
    (or _HOLDS; every end's deletion counts), for settling the directory's past (directory_settle.py)."""
    ended, joins = _first_ending(rel, -1)
    return (
        f"SELECT l.rel, l.a, l.b, l.c, l.added_at, l.removed_at, {ended} FROM links AS l {joins}"  # noqa: S608
        f" WHERE l.rel = {int(rel)} AND l.added_at IS NOT NULL"
    )


def _links(
    conn: sqlite3.Connection,
    kind: str,
    entity_id: str,
    deletions: tuple[int, ...],
    relations: Collection[Relation] | None = None,
) -> tuple[list[tuple[Rel, list[str], int, int]], int]:
    """(relation, end ids, added stamp, first ending stamp or _HOLDS) of the links that hold now and of the most
    recently made ones (of `relations` only, when given); and how many such links the entity has in all. A link
    made before one of the entity's `deletions` ended at the first of them after it was made."""
    out, total = [], 0
    for rel, kinds in ENDS.items():
        if relations is not None and Relation[rel.name] not in relations:
            continue
        for own, end_kind in enumerate(kinds):
            if end_kind != kind:
                continue
            total += int(conn.execute(_count_sql(rel, own), (entity_id,)).fetchone()[0])
            seen = set()
            for a, b, c, added in conn.execute(_holding_sql(rel, own), (entity_id,)):
                if all(added > d for d in deletions):
                    out.append((rel, [a, b, c][: len(kinds)], int(added), _HOLDS))
                    seen.add((a, b, c))
            for a, b, c, added, ended in conn.execute(_recent_sql(rel, own), (entity_id, MAX_ENDED)):
                if (a, b, c) in seen:
                    continue
                for went in deletions:  # the entity itself went (or its organization, for a group)
                    ended = went if added < went < ended else ended
                if ended != _HOLDS:
                    out.append((rel, [a, b, c][: len(kinds)], int(added), int(ended)))
    return out, total


def entity_state(
    conn: sqlite3.Connection,
    row: tuple[object, ...],
    upto: int,
    relations: Collection[Relation] | None = None,
    settled: SettledDirectory = NOTHING,
) -> EntityState:
    """The state of the entity in `row` (an ENTITY row); call inside a read transaction. With `relations`, only
    links of those: a group's roles without its thousands of memberships (the alert rules' state checks). The
    directory's `settled` past adds the links that ended before its point, and names their ends."""
    entity = entity_from_row(row)
    deletions = own_deletions(conn, settled, entity.kind, entity.id)
    links, total = _links(conn, entity.kind, entity.id, deletions, relations)
    old = _settled_links(conn, settled, entity, relations)
    links, total = links + old, total + len(old)
    holding = [link for link in links if link[3] == _HOLDS]
    ended = sorted((link for link in links if link[3] != _HOLDS), key=lambda link: -link[3])
    shown = holding + ended[:MAX_ENDED]
    found = _ends(conn, shown)
    wanted = {
        (k, i) for rel, ids, _a, _e in shown for k, i in zip(ENDS[rel], ids, strict=True)
    } - found.keys()
    for r in entity_rows(conn, settled, wanted):
        key, one = (str(r[0]), str(r[1])), entity_from_row(r)
        found[key] = merged(found[key], one) if key in found else one
    return EntityState(entity, _as_links(shown, found), upto, ended_total=total - len(holding))


def _settled_links(
    conn: sqlite3.Connection,
    settled: SettledDirectory,
    entity: Entity,
    relations: Collection[Relation] | None,
) -> list[tuple[Rel, list[str], int, int]]:
    """The entity's settled links of `relations` (all: None) that the live directory does not hold again."""
    if settled.links is None:
        return []
    ends = {int(r): kinds for r, kinds in ENDS.items() if relations is None or Relation[r.name] in relations}
    out = []
    for rel, ids, added, ended in links_of(settled, entity.kind, entity.id, ends):
        # a link made again since it was settled is the live row's (the directory keeps a link's newest add)
        key = (rel, *ids, *([""] * (3 - len(ids))))
        if (
            conn.execute("SELECT 1 FROM links WHERE rel = ? AND a = ? AND b = ? AND c = ?", key).fetchone()
            is None
        ):
            out.append((Rel(rel), list(ids), added, ended))
    return out


def holding_links(conn: sqlite3.Connection, rel: Rel) -> list[tuple[str, str, str, int]]:
    """(a, b, c, add stamp) of every link of `rel` that holds now: the alert rules' state checks start from
    these after a restart (alerts/access_state.py)."""
    checks = " ".join(f"AND NOT EXISTS ({e.ended})" for e in _endings(rel, -1))
    sql = (
        f"SELECT l.a, l.b, l.c, l.added_at FROM links AS l WHERE l.rel = {int(rel)}"  # noqa: S608 - constants
        f" AND l.added_at IS NOT NULL AND NOT coalesce(l.removed_at > l.added_at, 0) {checks}"
    )
    return [(str(a), str(b), str(c), int(added)) for a, b, c, added in conn.execute(sql)]


def _ends(
    conn: sqlite3.Connection, shown: list[tuple[Rel, list[str], int, int]]
) -> dict[tuple[str, str], Entity]:
    """The entities at the ends of links, by (kind, id), in one query."""
    wanted = sorted({(k, i) for rel, ids, _a, _e in shown for k, i in zip(ENDS[rel], ids, strict=True)})
    return {
        (str(r[0]), str(r[1])): entity_from_row(r)
        for r in conn.execute(f"SELECT {ENTITY} FROM {FROM_KEYS}", (orjson.dumps(wanted).decode(),))  # noqa: S608
    }


def _as_links(
    shown: list[tuple[Rel, list[str], int, int]], found: dict[tuple[str, str], Entity]
) -> tuple[Link, ...]:
    """Links with their ends' entities, current ones first, then the most recently ended."""
    out = []
    for rel, ids, added, ended_at in shown:
        ends = tuple(found.get((k, i)) or Entity(k, i) for k, i in zip(ENDS[rel], ids, strict=True))
        until = None if ended_at == _HOLDS else stamp_ms(ended_at)
        out.append(Link(Relation[rel.name], ends, stamp_ms(added), until))
    out.sort(key=lambda link: (not link.current, -(link.until_ms or link.since_ms or 0)))
    return tuple(out)
