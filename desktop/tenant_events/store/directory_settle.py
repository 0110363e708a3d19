"""Settles the entity directory's past into the archive folder, so the live file keeps the tenant as it is and the
live tier's days, not every entity and link ever seen (docs/archive.md "The entity directory's past").

At the settled point S (the start of the UTC day the live tier's cutoff falls in, as for the access history,
access_settle.py) the pass takes out of the live file:

- every link that ended before S (removed, or one of its ends deleted, a group's organization deleted, a member's
  role with its membership), kept with the stamp it ended at: nothing can make it hold again but a new add,
  which is a new row;
- every entity deleted before S (a group: or its organization) that no link left live names (a link's ends are
  read from `entities` to tell whether it holds) and, for an organization, that no group left live belongs to.

Both go into the two files of directory_settled.py, written anew with what the old ones held, then ONE writer
transaction lists the new files, puts the old ones in the archive's garbage, deletes the rows and raises S. A row
that changed since the pass read it (an event came meanwhile) stays live, and so does an entity a link named
meanwhile: the reader merges what is in both. Existing entities, holding links, roles and connections (the
service sends no deletion of them) are never settled: they are the tenant as it is.

A fact that arrives after its time was settled (an event delivered later than the live setting) is taken in as
a new live row: a late add of a link whose end was settled as deleted shows as holding (its end's deletion is
no longer in the live file), as the access history counts such a fact from S on.
"""

from __future__ import annotations

import secrets
import sqlite3
import time
from pathlib import Path
from typing import Final

from tenant_events.store import access_settle
from tenant_events.store import directory_settled as settled_files
from tenant_events.store.access_settle import point_of
from tenant_events.store.archive_build import remove, write_rows
from tenant_events.store.archive_layout import folder_of
from tenant_events.store.directory import STAMP_SHIFT, Rel
from tenant_events.store.entity_state import ENTITY, FROM, ended_sql
from tenant_events.store.schema import connect, rollback
from tenant_events.store.writer import StoreWriter

PREFIX: Final = "directory."
_ENTITY_TYPES: Final = (
    ("kind", "VARCHAR"),
    ("id", "VARCHAR"),
    ("name", "VARCHAR"),
    ("display", "VARCHAR"),
    ("email", "VARCHAR"),
    ("detail", "VARCHAR"),
    ("created_at", "BIGINT"),
    ("deleted_at", "BIGINT"),
    ("name_at", "BIGINT"),
    ("display_at", "BIGINT"),
    ("email_at", "BIGINT"),
    ("detail_at", "BIGINT"),
    ("parent", "VARCHAR"),
)
_LINK_TYPES: Final = (
    ("rel", "INTEGER"),
    ("a", "VARCHAR"),
    ("b", "VARCHAR"),
    ("c", "VARCHAR"),
    ("added_at", "BIGINT"),
    ("removed_at", "BIGINT"),
    ("ended", "BIGINT"),
)
# The stamps a pass checks again in its transaction: a row that changed since it was read stays live.
_ENTITY_STAMPS: Final = ("name_at", "display_at", "email_at", "detail_at", "created_at", "deleted_at")
_SCRATCH: Final = (
    "CREATE TEMP TABLE IF NOT EXISTS settling_entities (kind TEXT, id TEXT, name_at INTEGER, display_at INTEGER,"
    " email_at INTEGER, detail_at INTEGER, created_at INTEGER, deleted_at INTEGER, PRIMARY KEY (kind, id))",
    "CREATE TEMP TABLE IF NOT EXISTS settling_parents (id TEXT PRIMARY KEY)",
)
_NAMED: Final = (  # ... by a link left live (each test on an index: links' key, links_b, links_c)
    f" AND NOT EXISTS (SELECT 1 FROM links AS l WHERE l.rel IN ({', '.join(str(int(r)) for r in Rel)})"  # noqa: S608
    " AND l.a = e.id) AND NOT EXISTS (SELECT 1 FROM links AS l WHERE l.b = e.id)"
    " AND NOT EXISTS (SELECT 1 FROM links AS l WHERE l.c = e.id AND l.c <> '')"
)
_SAME: Final = " AND ".join(f"t.{s} IS e.{s}" for s in _ENTITY_STAMPS)
_DELETE_ENTITIES: Final = (
    "DELETE FROM entities AS e WHERE e.kind {op} 'organization' AND EXISTS (SELECT 1 FROM"  # noqa: S608 - constants
    f" temp.settling_entities AS t WHERE t.kind = e.kind AND t.id = e.id AND {_SAME}){_NAMED}"
)


def settle(writer: StoreWriter, cutoff_s: float, now: float | None = None) -> int:
    """Settle what ended or was deleted before the day of `cutoff_s` (the live tier's cutoff); blocking (it
    writes Parquet): on a worker thread, the catalog change on the writer thread. Returns the links and
    entities taken out of the live file (0: nothing was due, or the directory is behind the stored events)."""
    point = point_of(cutoff_s)
    now = time.time() if now is None else now
    conn = connect(writer.path, readonly=True)
    try:
        conn.execute("BEGIN")
        try:
            was = settled_files.settled_point(conn)
            if point <= was or _behind(conn, point >> STAMP_SHIFT):
                return 0
            links, staying = _links(conn, point)
            entities = _entities(conn, point, staying)
            old = settled_files.names(conn)
        finally:
            conn.execute("COMMIT")
    finally:
        conn.close()
    folder = folder_of(writer.path)
    built: list[tuple[str, str, int, int]] = []
    try:
        if links or entities:
            token = secrets.token_hex(4)
            for part, columns, rows, order in (
                ("entities", _ENTITY_TYPES, [(*r[:7], r[12], *r[8:12], r[13]) for r in entities], "kind, id"),
                ("links", _LINK_TYPES, links, "a, b, c"),
            ):
                name = f"{PREFIX}{token}.{part}"
                earlier = [folder / old[part]] if part in old else []
                built.append((name, part, *write_rows(folder, name, columns, rows, earlier, order)))
        done = writer.run_archive_job(lambda c: _commit(c, was, point, built, entities, links, now)).result()
    except BaseException:
        remove(folder / b[0] for b in built)
        raise
    if not done:  # another process settled first
        remove(folder / b[0] for b in built)
        return 0
    return len(links) + len(entities)


def _behind(conn: sqlite3.Connection, point_ms: int) -> bool:
    """The directory has not taken in every stored event before the point yet: an archived one (`reindex`
    building it again) or a live one (a catch-up)."""
    counters = dict(
        conn.execute("SELECT name, value FROM counters WHERE name IN ('directory_upto', 'archived_upto')")
    )
    upto = int(counters.get("directory_upto", 0))
    if upto < int(counters.get("archived_upto", 0)):
        return True
    late = conn.execute("SELECT 1 FROM events WHERE seq > ? AND time_ms < ? LIMIT 1", (upto, point_ms))
    return late.fetchone() is not None


def _links(conn: sqlite3.Connection, point: int) -> tuple[list[tuple[object, ...]], set[str]]:
    """The links that ended before the point, and the ids named by those left live."""
    settling: list[tuple[object, ...]] = []
    staying: set[str] = set()
    for rel in Rel:
        for row in conn.execute(ended_sql(rel)):
            if int(row[6]) < point:
                settling.append(tuple(row))
            else:
                staying.update(str(x) for x in row[1:4])
    return settling, staying


def _entities(conn: sqlite3.Connection, point: int, named: set[str]) -> list[tuple[object, ...]]:
    """ENTITY rows, each with its own deletion stamp and its organization (a group's), of the entities deleted
    before the point that no link left live names; an organization only when no group left live belongs to it."""
    rows = conn.execute(
        f"SELECT {ENTITY}, e.deleted_at, e.parent FROM {FROM}"  # noqa: S608 - constants only
        " WHERE e.kind IN ('user', 'organization', 'group')"
    ).fetchall()
    out, parents = [], set()
    for row in rows:
        deleted, created = row[7], row[6]
        gone = (
            isinstance(deleted, int)
            and deleted < point
            and deleted > (created if created is not None else -1)
        )
        if gone and str(row[1]) not in named:
            out.append(tuple(row))
        elif row[0] == "group" and row[5] == "organization" and row[13] is not None:
            parents.add(row[13])  # (a group left live: its organization stays)
    return [r for r in out if not (r[0] == "organization" and r[1] in parents)]


def _commit(
    conn: sqlite3.Connection,
    was: int,
    point: int,
    built: list[tuple[str, str, int, int]],
    entities: list[tuple[object, ...]],
    links: list[tuple[object, ...]],
    now: float,
) -> bool:
    """On the writer: the new files listed, the old ones to the garbage, the settled rows deleted (those unchanged
    since they were read), the point raised; False (nothing changed) when another process settled meanwhile."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        for statement in settled_files.TABLE_SQL.split(";"):  # (executescript would commit first)
            if statement.strip():
                conn.execute(statement)
        if settled_files.settled_point(conn) != was:
            conn.execute("ROLLBACK")
            return False
        if built:
            settled_files.forget(conn, settled_files.names(conn).values(), now)
            conn.executemany(
                "INSERT INTO directory_files (name, part, rows, bytes, created_at) VALUES (?, ?, ?, ?, ?)",
                [(*b, now) for b in built],
            )
        conn.executemany(
            "DELETE FROM links WHERE rel = ? AND a = ? AND b = ? AND c = ? AND added_at IS ? AND removed_at IS ?",
            [r[:6] for r in links],
        )
        for statement in _SCRATCH:
            conn.execute(statement)
        conn.execute("DELETE FROM temp.settling_entities")
        # ENTITY's columns 0, 1, 8-11 and 6, then the entity's own deletion stamp (the last column)
        conn.executemany(
            "INSERT OR REPLACE INTO temp.settling_entities VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(r[0], r[1], r[8], r[9], r[10], r[11], r[6], r[12]) for r in entities],
        )
        conn.execute(_DELETE_ENTITIES.format(op="<>"))  # users and groups first, then organizations
        conn.execute("DELETE FROM temp.settling_parents")
        conn.execute(
            "INSERT OR IGNORE INTO temp.settling_parents SELECT parent FROM entities"
            " WHERE kind = 'group' AND detail = 'organization' AND parent IS NOT NULL"
        )
        conn.execute(
            f"{_DELETE_ENTITIES.format(op='=')} AND e.id NOT IN (SELECT id FROM temp.settling_parents)"  # noqa: S608
        )
        conn.execute("DELETE FROM temp.settling_entities")
        conn.execute("DELETE FROM temp.settling_parents")
        conn.execute("UPDATE counters SET value = ? WHERE name = 'directory_settled'", (point,))
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise
    return True


def orphans(database: Path, known: set[str], now: float, age: float) -> list[Path]:
    """Settled files no list names, older than `age`: a pass killed before its transaction."""
    return access_settle.orphans(database, known, now, age, pattern=f"{PREFIX}*")
