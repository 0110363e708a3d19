"""The settled part of the entity directory: what a reader needs to find in it.

directory_settle.py moves the directory's past out of the live file into the archive folder: the links that
ended before the settled point (each with the stamp it ended at) and the entities deleted before it that no link
left live names. Two Parquet files, `directory.<id>.entities` and `directory.<id>.links`, listed in
`directory_files` (one of each at a time: a pass writes both anew, with what they held). A reader reads the list
and the live rows in one read transaction, and looks in the files for what the live rows lack: the name of a
user deleted a year ago, in a sentence about an archived event; its links, in its state.

An entity found in both (named again by an event after it was settled) is the two merged, each value by the
newer stamp (`merged`). A settled group of an organization keeps its own deletion and its organization: read, it
takes the organization's deletion when that is newer, wherever the organization is kept, as the live directory's
entities do (entity_state.ENTITY). Every read here runs inside the caller's read transaction on the live file.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import orjson

from tenant_events.store import duck
from tenant_events.store.archive_layout import folder_of
from tenant_events.store.entity_records import Entity

# The entity columns, as entity_state.ENTITY reads them but for the deletion: the entity's own (a group's
# organization's is added when read), and a group's organization.
ENTITY_COLUMNS: Final = (
    "kind, id, name, display, email, detail, created_at, deleted_at, name_at, display_at, email_at, detail_at,"
    " parent"
)
LINK_COLUMNS: Final = "rel, a, b, c, added_at, removed_at, ended"
TABLE_SQL: Final = """
CREATE TABLE IF NOT EXISTS directory_files (
    name TEXT PRIMARY KEY, part TEXT NOT NULL, rows INTEGER NOT NULL, bytes INTEGER NOT NULL,
    created_at REAL NOT NULL
) WITHOUT ROWID;
INSERT OR IGNORE INTO counters (name, value) VALUES ('directory_settled', 0);
"""
SettledLink = tuple[int, tuple[str, ...], int, int]  # rel, end ids, added stamp, ended stamp


@dataclass(frozen=True)
class SettledDirectory:
    """The files a read transaction sees (None: nothing settled)."""

    entities: Path | None = None
    links: Path | None = None


NOTHING: Final = SettledDirectory()


def settled_point(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT value FROM counters WHERE name = 'directory_settled'").fetchone()
    return int(row[0]) if row else 0


def names(conn: sqlite3.Connection) -> dict[str, str]:
    """part ('entities', 'links') -> file name; inside the caller's transaction."""
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'directory_files'").fetchone() is None:
        return {}
    return {str(part): str(name) for part, name in conn.execute("SELECT part, name FROM directory_files")}


def listed(conn: sqlite3.Connection, database: Path) -> SettledDirectory:
    """Inside the caller's read transaction."""
    parts = names(conn)
    if not parts:
        return NOTHING
    folder = folder_of(database)
    return SettledDirectory(*(folder / parts[p] if p in parts else None for p in ("entities", "links")))


def _rows(path: Path | None, where: str, params: list[object], columns: str) -> list[tuple[object, ...]]:
    if path is None:
        return []
    cur = duck.cursor()
    try:
        sql = f"SELECT {columns} FROM read_parquet(?) WHERE {where}"  # noqa: S608 - constants only
        return [tuple(r) for r in cur.execute(sql, [str(path), *params]).fetchall()]
    finally:
        cur.close()


def _as_read(
    conn: sqlite3.Connection, settled: SettledDirectory, rows: list[tuple[object, ...]]
) -> list[tuple[object, ...]]:
    """Settled rows as entity_state.ENTITY reads an entity: a group of an organization deleted later than the
    group itself takes that deletion (the organization's row live, else settled)."""
    parents = sorted({str(r[12]) for r in rows if r[0] == "group" and r[5] == "organization" and r[12]})
    deleted: dict[str, object] = {}
    if parents:
        deleted = dict(
            conn.execute(
                "SELECT e.id, e.deleted_at FROM json_each(?) AS j CROSS JOIN entities AS e"
                " ON e.kind = 'organization' AND e.id = j.value",
                (orjson.dumps(parents).decode(),),
            ).fetchall()
        )
        missing = [p for p in parents if p not in deleted]
        if missing:
            where = "kind = 'organization' AND list_contains(?, id)"
            deleted.update(
                (str(r[0]), r[1]) for r in _rows(settled.entities, where, [missing], "id, deleted_at")
            )
    out = []
    for row in rows:
        own, theirs = (
            row[7],
            deleted.get(str(row[12])) if row[0] == "group" and row[5] == "organization" else None,
        )
        newer = isinstance(theirs, int) and theirs > (own if isinstance(own, int) else -1)
        out.append((*row[:7], theirs if newer else own, *row[8:12]))
    return out


def entity_rows(
    conn: sqlite3.Connection, settled: SettledDirectory, keys: Iterable[tuple[str, str]]
) -> list[tuple[object, ...]]:
    """The settled rows (entity_state.ENTITY's columns) of `(kind, id)` keys."""
    wanted = set(keys)
    if not wanted or settled.entities is None:
        return []
    rows = _rows(settled.entities, "list_contains(?, id)", [sorted({i for _k, i in wanted})], ENTITY_COLUMNS)
    return _as_read(conn, settled, [r for r in rows if (r[0], r[1]) in wanted])


def found_rows(
    conn: sqlite3.Connection, settled: SettledDirectory, kind: str, text: str, *, by_id: bool
) -> list[tuple[object, ...]]:
    """Entities of `kind` whose id is `text` (`by_id`), else whose email, name or display name is `text` in any
    case."""
    if by_id:
        rows = _rows(settled.entities, "kind = ? AND id = ?", [kind, text], ENTITY_COLUMNS)
    else:
        where = "kind = ? AND lower(?) IN (lower(email), lower(name), lower(display))"
        rows = _rows(settled.entities, where, [kind, text], ENTITY_COLUMNS)
    return _as_read(conn, settled, rows)


def email_rows(conn: sqlite3.Connection, settled: SettledDirectory, email: str) -> list[tuple[object, ...]]:
    """Users with that email, in any case."""
    return _as_read(
        conn,
        settled,
        _rows(settled.entities, "kind = 'user' AND lower(email) = lower(?)", [email], ENTITY_COLUMNS),
    )


def own_deletions(
    conn: sqlite3.Connection, settled: SettledDirectory, kind: str, entity_id: str
) -> tuple[int, ...]:
    """What ends every link of the entity: its own deletion and, for a group of an organization, the
    organization's (each as the live directory has it, and as the settled past does)."""
    sql = "SELECT deleted_at, detail, parent FROM entities WHERE kind = ? AND id = ?"
    rows = [*conn.execute(sql, (kind, entity_id)).fetchall()]
    rows += _rows(settled.entities, "kind = ? AND id = ?", [kind, entity_id], "deleted_at, detail, parent")
    out = {int(r[0]) for r in rows if isinstance(r[0], int)}
    for parent in {str(r[2]) for r in rows if kind == "group" and r[1] == "organization" and r[2]}:
        found = [
            *conn.execute("SELECT deleted_at FROM entities WHERE kind = 'organization' AND id = ?", (parent,))
        ]
        found += _rows(settled.entities, "kind = 'organization' AND id = ?", [parent], "deleted_at")
        out |= {int(r[0]) for r in found if isinstance(r[0], int)}
    return tuple(sorted(out))


def links_of(
    settled: SettledDirectory, kind: str, entity_id: str, ends: dict[int, tuple[str, ...]]
) -> list[SettledLink]:
    """The settled links the entity is an end of, as its kind: `ends` gives each relation's kinds in order
    (the relations asked about only)."""
    rows = _rows(settled.links, "? IN (a, b, c)", [entity_id], "rel, a, b, c, added_at, ended")
    newest: dict[tuple[object, ...], tuple[object, ...]] = {}
    for (
        row
    ) in rows:  # a link settled twice (made again, ended again): its newest add, as the directory keeps it
        if row[:4] not in newest or int(row[4]) > int(newest[row[:4]][4]):  # type: ignore[call-overload]
            newest[row[:4]] = row
    out = []
    for rel, a, b, c, added, ended in newest.values():
        kinds = ends.get(int(rel))  # type: ignore[call-overload]
        ids = (str(a), str(b), str(c))
        if kinds and any(k == kind and ids[p] == entity_id for p, k in enumerate(kinds)):
            out.append((int(rel), ids[: len(kinds)], int(added), int(ended)))  # type: ignore[call-overload]
    return out


def merged(live: Entity, settled: Entity) -> Entity:
    """One entity from its live row and its settled one: each value as the newer stamp set it."""
    values, stamps = [], []
    old_stamps = settled.stamps or (None,) * 4
    new_stamps = live.stamps or (None,) * 4
    for field, new_at, old_at in zip(
        ("name", "display", "email", "detail"), new_stamps, old_stamps, strict=True
    ):
        newer = getattr(live, field) is not None and (old_at is None or (new_at or -1) >= old_at)
        source, at = (live, new_at) if newer or getattr(settled, field) is None else (settled, old_at)
        values.append(getattr(source, field))
        stamps.append(at)
    created = max((t for t in (live.created_ms, settled.created_ms) if t is not None), default=None)
    deleted = max((t for t in (live.deleted_ms, settled.deleted_ms) if t is not None), default=None)
    gone = deleted if deleted is not None and deleted > (created if created is not None else -1) else None
    name, display, email, detail = values
    return Entity(live.kind, live.id, name, display, email, detail, created, gone, tuple(stamps))


def forget(conn: sqlite3.Connection, names_: Iterable[str], now: float) -> None:
    """Files out of the list, into the archive's garbage (deleted after its grace period: a reader may still
    read them); inside the caller's transaction."""
    for name in names_:
        conn.execute("DELETE FROM directory_files WHERE name = ?", (name,))
        conn.execute("INSERT OR REPLACE INTO archive_garbage (name, since) VALUES (?, ?)", (name, now))


def clear(conn: sqlite3.Connection, now: float | None = None) -> None:
    """Forget the settled part (the directory is built again from every event); inside the caller's
    transaction."""
    forget(conn, names(conn).values(), time.time() if now is None else now)
    conn.execute("UPDATE counters SET value = 0 WHERE name = 'directory_settled'")
