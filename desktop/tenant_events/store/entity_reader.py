"""Read API over one tenant's entity directory: look entities up, an entity's state, its timeline.

Its own read-only connection (like `EventReader`); calls are serialised by a lock. Names for summary sentences
come from `entities` (one query for a page of rows), an entity's state from `links` with the cascade rule of
store/directory.py applied here, and timelines from timeline_query.py.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

import orjson

from tenant_events.store import timeline_query
from tenant_events.store.directory import Rel
from tenant_events.store.entity_records import Entity, EntityState, Link, Relation, stamp_ms
from tenant_events.store.records import StoredEvent
from tenant_events.store.schema import connect

# An entity row with its effective deletion: an organization's groups go when it goes (the service sends no
# group.deleted for them; the simulator's tenant does the same).
_ENTITY: Final = (
    "e.kind, e.id, e.name, e.display, e.email, e.detail, e.created_at,"
    " CASE WHEN p.deleted_at > coalesce(e.deleted_at, -1) THEN p.deleted_at ELSE e.deleted_at END"
)
_PARENT: Final = (
    " LEFT JOIN entities AS p ON e.kind = 'group' AND e.detail = 'organization' AND p.kind = 'organization'"
    " AND p.id = e.parent"
)
_FROM: Final = f"entities AS e{_PARENT}"
_FROM_KEYS: Final = (
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
_COLUMN: Final = ("a", "b", "c")
# A role given to an organization member ends when the member leaves the organization (the service sends no
# role.deleted for it; the simulator's tenant does the same).
_MEMBERSHIP_REMOVED: Final = (
    f"CASE WHEN l.rel = {int(Rel.ORG_MEMBER_ROLE)} THEN (SELECT m.removed_at FROM links AS m"  # noqa: S608
    f" WHERE m.rel = {int(Rel.ORG_MEMBER)} AND m.a = l.a AND m.b = l.b AND m.c = '') END"
)


def _entity(row: tuple[object, ...]) -> Entity:
    kind, eid, name, display, email, detail, created_at, deleted_at = row
    created = created_at if isinstance(created_at, int) and created_at >= 0 else None
    deleted = deleted_at if isinstance(deleted_at, int) and deleted_at > (created or -1) else None
    return Entity(str(kind), str(eid), name, display, email, detail, stamp_ms(created), stamp_ms(deleted))  # type: ignore[arg-type]


class DirectoryReader:
    """Queries over the entity directory and object timelines of one tenant database."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn = connect(path, readonly=True)
        self._conn.execute("PRAGMA cache_size = -4000")
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> DirectoryReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def watermark(self) -> int:
        """The last stored seq the directory covers (store/directory.py `directory_upto`)."""
        with self._lock:
            return int(
                self._conn.execute("SELECT value FROM counters WHERE name = 'directory_upto'").fetchone()[0]
            )

    def unindexed(self) -> int:
        """How many stored seqs lie after the directory's watermark (a catch-up the indexer has not reached)."""
        with self._lock:
            row = self._conn.execute(
                "SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0)"
                " - (SELECT value FROM counters WHERE name = 'directory_upto')"
            ).fetchone()
        return max(0, int(row[0]))

    def entity(self, kind: str, entity_id: str) -> Entity | None:
        with self._lock:
            row = self._conn.execute(
                f"SELECT {_ENTITY} FROM {_FROM} WHERE e.kind = ? AND e.id = ?",  # noqa: S608
                (kind, entity_id),
            ).fetchone()
        return _entity(row) if row else None

    def entities(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], Entity]:
        """The known ones among `(kind, id)` keys, in one query (a page of summary sentences)."""
        wanted = orjson.dumps(sorted(set(keys))).decode()
        with self._lock:
            rows = self._conn.execute(f"SELECT {_ENTITY} FROM {_FROM_KEYS}", (wanted,)).fetchall()  # noqa: S608
        return {(str(r[0]), str(r[1])): _entity(r) for r in rows}

    def find(self, kind: str, text: str) -> list[Entity]:
        """Entities of `kind` whose id is `text`, else whose email (users) or name is `text` (any case)."""
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {_ENTITY} FROM {_FROM} WHERE e.kind = ? AND e.id = ?",  # noqa: S608
                (kind, text),
            ).fetchall()
            if not rows:
                rows = self._conn.execute(
                    f"SELECT {_ENTITY} FROM {_FROM} WHERE e.kind = ? AND (e.email = ? COLLATE NOCASE"  # noqa: S608
                    " OR e.name = ? COLLATE NOCASE OR e.display = ? COLLATE NOCASE) ORDER BY e.id",
                    (kind, text, text, text),
                ).fetchall()
        return [_entity(r) for r in rows]

    def by_email(self, email: str) -> list[Entity]:
        """Users with that email (any case); more than one when an address moved between accounts."""
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {_ENTITY} FROM {_FROM} WHERE e.kind = 'user' AND e.email = ? COLLATE NOCASE"  # noqa: S608
                " ORDER BY e.id",
                (email,),
            ).fetchall()
        return [_entity(r) for r in rows]

    def state(self, kind: str, entity_id: str) -> EntityState | None:
        """The entity and all its links, current ones first (then the most recently ended)."""
        with self._lock:
            self._conn.execute("BEGIN")  # one snapshot: the writer may move the watermark meanwhile
            try:
                row = self._conn.execute(
                    f"SELECT {_ENTITY} FROM {_FROM} WHERE e.kind = ? AND e.id = ?",  # noqa: S608
                    (kind, entity_id),
                ).fetchone()
                if row is None:
                    return None
                upto = int(
                    self._conn.execute("SELECT value FROM counters WHERE name = 'directory_upto'").fetchone()[
                        0
                    ]
                )
                raw_links = self._links(kind, entity_id)
                ends = {
                    (k, i)
                    for rel, *ids, _added, _removed in raw_links
                    for k, i in zip(ENDS[rel], ids, strict=False)
                }
                wanted = orjson.dumps(sorted(ends)).decode()
                rows = self._conn.execute(f"SELECT {_ENTITY} FROM {_FROM_KEYS}", (wanted,)).fetchall()  # noqa: S608
            finally:
                self._conn.execute("COMMIT")
        found = {(str(r[0]), str(r[1])): (r, _entity(r)) for r in rows}
        links = [self._link(rel, ids, added, removed, found) for rel, *ids, added, removed in raw_links]
        links.sort(key=lambda link: (not link.current, -(link.until_ms or link.since_ms or 0)))
        return EntityState(_entity(row), tuple(links), upto)

    def _links(self, kind: str, entity_id: str) -> list[tuple[Rel, str, str, str, int | None, int | None]]:
        out: list[tuple[Rel, str, str, str, int | None, int | None]] = []
        for rel, kinds in ENDS.items():
            for column, end_kind in zip(_COLUMN, kinds, strict=False):
                if end_kind != kind:
                    continue
                extra = " AND c <> ''" if column == "c" else ""
                for a, b, c, added, removed, left in self._conn.execute(
                    f"SELECT a, b, c, added_at, removed_at, {_MEMBERSHIP_REMOVED} FROM links AS l"  # noqa: S608
                    f" WHERE rel = ? AND {column} = ?{extra}",
                    (int(rel), entity_id),
                ):
                    if isinstance(left, int) and left > (removed if isinstance(removed, int) else -1):
                        removed = left  # the member left the organization: its roles there went with it
                    out.append((rel, a, b, c, added, removed))
        return out

    @staticmethod
    def _link(
        rel: Rel,
        ids: list[str],
        added: int | None,
        removed: int | None,
        found: dict[tuple[str, str], tuple[tuple[object, ...], Entity]],
    ) -> Link:
        """The link, ended by its removal or by the deletion of an end (the cascade of store/directory.py),
        whichever came first after it was made."""
        since = added if isinstance(added, int) and added >= 0 else -1
        endings = [removed] if isinstance(removed, int) else []
        ends = []
        for kind, eid in zip(ENDS[rel], ids, strict=False):
            row, entity = found.get((kind, eid), ((), Entity(kind, eid)))
            ends.append(entity)
            if row and isinstance(row[7], int):
                endings.append(row[7])
        after = [stamp for stamp in endings if stamp > since]
        return Link(Relation[rel.name], tuple(ends), stamp_ms(since if since >= 0 else None),
                    stamp_ms(min(after)) if after else None)  # fmt: skip

    def event_data(self, seqs: Iterable[int]) -> dict[int, tuple[str, dict[str, Any]]]:
        """The type and `data` of stored events by seq (one query), to make a page's summary sentences."""
        wanted = orjson.dumps(sorted(set(seqs))).decode()
        with self._lock:
            rows = self._conn.execute(
                "SELECT e.seq, e.type, e.raw FROM json_each(?) AS j CROSS JOIN events AS e ON e.seq = j.value",
                (wanted,),
            ).fetchall()
        out: dict[int, tuple[str, dict[str, Any]]] = {}
        for seq, kind, raw in rows:
            try:
                data = orjson.loads(raw)["event"]["data"]
            except (orjson.JSONDecodeError, KeyError, TypeError):
                continue
            if isinstance(data, dict):
                out[int(seq)] = (str(kind), data)
        return out

    def timeline(
        self, kind: str, entity_id: str, before_seq: int | None = None, limit: int = 100
    ) -> list[StoredEvent]:
        """Up to `limit` stored events that name the entity, stored before `before_seq` (None: the newest),
        newest first, each with its raw JSON."""
        with self._lock:
            return timeline_query.page(self._conn, kind, entity_id, before_seq, limit)


def open_directory(path: Path) -> DirectoryReader:
    """A directory reader over `path`; the database must exist and be at the current schema (a writer opened it)."""
    if not path.exists():
        raise FileNotFoundError(path)
    try:
        return DirectoryReader(path)
    except sqlite3.OperationalError as exc:
        from tenant_events.errors import StorageError

        raise StorageError(f"cannot read the event database {path}: {exc}") from exc
