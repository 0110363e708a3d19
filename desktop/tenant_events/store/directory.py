"""Keeps the entity directory (users, organizations, groups, roles, connections and their links) from the stored
events.

Where it sits: the writer thread (writer.py) calls `after_batch` inside each batch's transaction and `catch_up`
inside each transaction of its idle-time indexer. A batch of live events (up to LIVE_BATCH) goes into the
directory in the transaction that stores it. A large batch (a catch-up replaying the backlog at tens of thousands
of events a second) is left to the indexer, which brings the directory up to the rows it indexes, chunk by chunk,
once no batch has come for a while: applying it in the batch's transaction cost 19 µs an event of writer-thread
CPU (SQLite parses each event's JSON again, then probes two b-trees per entity named), more than double the
writer's own 8.5 µs, and made the writer the bottleneck (bench/ingest.py: 52 % of the rate without it). The
`directory_upto` counter says how far the directory goes; readers treat later events as not in it yet, as they do
for the full-text index.

Either way ONE statement does the work: a row offered to `directory_pending`, whose trigger runs set-based over
the new rows in SQLite, with the GIL released (each statement the writer runs is one more wait for the GIL):

  1. directory_scratch  one row per event: the fields of `data.object` the directory needs, one JSON parse each;
                        `directory_types` says which fields each event type carries (docs/event-stream.md "Payloads")
  2. directory_mention  view: each entity an event names, with the attributes the event gives it (a group's
                        `parent` is its organization or connection: deleting the organization deletes it)
  3. entities           upsert; an entity first seen by reference (a member added to an organization whose
                        `organization.created` never arrived) is stored with its id alone and filled in later
  4. links              memberships and role assignments: the stamps of the newest add and the newest removal

Events may arrive out of order (docs/event-stream.md "Quirks") and `rebuild` replays old events after newer ones, so nothing
depends on processing order: an attribute keeps the stamp of the event that set it and only a newer stamp replaces
it; a link is current while its newest add is newer than its newest removal and than the deletion of either end
(the service removes a deleted user from its organizations without events; entity_reader.py applies that when
reading). A stamp is `time_ms << 20 | (seq & 0xFFFFF)`: the event time, the stored order breaking ties within a
millisecond.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from enum import IntEnum, IntFlag
from typing import Final

log = logging.getLogger(__name__)

# bench/ingest.py turns this off in a child process to measure what the directory costs; events stored meanwhile
# are missing from the directory until `tenant-events reindex`.
ENABLED = True
STAMP_SHIFT: Final = 20
REBUILD_CHUNK: Final = 10_000
LIVE_BATCH: Final = 50  # events: batches up to this size (live ones, flushed every 100 ms) update it at once


class Rel(IntEnum):
    """`links.rel`: what a link is, and so which kinds its ends a, b and c are (c is '' for two-ended ones)."""

    ORG_MEMBER = 1  # a organization, b user
    ORG_MEMBER_ROLE = 2  # a organization, b user, c role
    ORG_CONNECTION = 3  # a organization, b connection
    ORG_GROUP_ROLE = 4  # a organization, b group, c role
    GROUP_MEMBER = 5  # a group, b user
    GROUP_ROLE = 6  # a group, b role
    GROUP_CONNECTION_MEMBER = 7  # a group, b connection


class _Has(IntFlag):
    """What an event type's `data.object` carries (docs/event-stream.md "Payloads"): `directory_types.mask`."""

    USER = 1  # a user object: user_id, name, email
    ORG = 2  # an organization object: id, name, display_name
    GROUP = 4  # a group object: id, name, type
    ORG_REF = 8  # organization {id, name}
    USER_REF = 16  # user {user_id}
    GROUP_REF = 32  # group {id, name, type}
    ROLE_REF = 64  # role {id, name}
    CONNECTION_REF = 128  # connection {id, name}
    MEMBER_REF = 256  # member {id, member_type, connection_id}


def _family(
    prefix: str, has: _Has, verbs: tuple[str, ...], rel: Rel | None = None
) -> dict[str, tuple[_Has, Rel | None, bool | None]]:
    """Types `prefix.verb`, what they carry, and for link events the relation and whether they add."""
    return {f"{prefix}.{v}": (has, rel, None if rel is None else v in ("added", "assigned")) for v in verbs}


_CUD: Final = ("created", "updated", "deleted")
_TYPES: Final = {
    **_family("user", _Has.USER, _CUD),
    **_family("organization", _Has.ORG, _CUD),
    **_family("group", _Has.GROUP, _CUD),
    **_family("organization.member", _Has.ORG_REF | _Has.USER_REF, ("added", "deleted"), Rel.ORG_MEMBER),
    **_family(
        "organization.member.role",
        _Has.ORG_REF | _Has.USER_REF | _Has.ROLE_REF,
        ("assigned", "deleted"),
        Rel.ORG_MEMBER_ROLE,
    ),
    **_family(
        "organization.connection",
        _Has.ORG_REF | _Has.CONNECTION_REF,
        ("added", "removed"),
        Rel.ORG_CONNECTION,
    ),
    **_family("organization.connection", _Has.ORG_REF | _Has.CONNECTION_REF, ("updated",)),
    **_family(
        "organization.group.role",
        _Has.ORG_REF | _Has.GROUP_REF | _Has.ROLE_REF,
        ("assigned", "deleted"),
        Rel.ORG_GROUP_ROLE,
    ),
    **_family("group.member", _Has.GROUP_REF | _Has.MEMBER_REF, ("added", "deleted"), Rel.GROUP_MEMBER),
    **_family("group.role", _Has.GROUP_REF | _Has.ROLE_REF, ("assigned", "deleted"), Rel.GROUP_ROLE),
}


def _x(has: _Has, path: str) -> str:
    return f"CASE WHEN t.mask & {int(has)} THEN json_extract(e.raw, '$.event.data.object{path}') END"


_SUBJECT: Final = _Has.USER | _Has.ORG | _Has.GROUP
_IS_CONNECTION: Final = "json_extract(e.raw, '$.event.data.object.member.member_type') = 'connection'"

_SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS directory_types"
    " (type TEXT PRIMARY KEY, mask INTEGER NOT NULL, rel INTEGER, adds INTEGER) WITHOUT ROWID",
    """CREATE TABLE IF NOT EXISTS directory_scratch (
    seq INTEGER PRIMARY KEY, st INTEGER NOT NULL, type TEXT NOT NULL, rel INTEGER, adds INTEGER,
    skind TEXT, sid TEXT, sname TEXT, sdisplay TEXT, semail TEXT, sdetail TEXT, sparent TEXT,
    org TEXT, orgname TEXT, usr TEXT, grp TEXT, grpname TEXT, grptype TEXT, grpparent TEXT,
    role TEXT, rolename TEXT, con TEXT, conname TEXT, memkind TEXT, mem TEXT,
    ctxcon TEXT)""",  # data.context.connection as JSON: a sign-up's or log-in's connection {id, name, strategy}
    "CREATE TABLE IF NOT EXISTS directory_pending (last_seq INTEGER NOT NULL, max_gap INTEGER NOT NULL)",
    "INSERT OR IGNORE INTO counters (name, value) VALUES ('directory_upto', 0)",
    "DROP VIEW IF EXISTS directory_mention",
    """CREATE VIEW directory_mention (st, type, subject, kind, id, name, display, email, detail, parent) AS
    SELECT st, type, 1, skind, sid, sname, sdisplay, semail, sdetail, sparent FROM directory_scratch
        WHERE sid IS NOT NULL
    UNION ALL SELECT st, type, 0, 'organization', org, orgname, NULL, NULL, NULL, NULL FROM directory_scratch
        WHERE org IS NOT NULL
    UNION ALL SELECT st, type, 0, 'user', usr, NULL, NULL, NULL, NULL, NULL FROM directory_scratch
        WHERE usr IS NOT NULL
    UNION ALL SELECT st, type, 0, 'group', grp, grpname, NULL, NULL, grptype, grpparent FROM directory_scratch
        WHERE grp IS NOT NULL
    UNION ALL SELECT st, type, 0, 'role', role, rolename, NULL, NULL, NULL, NULL FROM directory_scratch
        WHERE role IS NOT NULL
    UNION ALL SELECT st, type, 0, 'connection', con, conname, NULL, NULL, NULL, NULL FROM directory_scratch
        WHERE con IS NOT NULL
    UNION ALL SELECT st, type, 0, memkind, mem, NULL, NULL, NULL, NULL, NULL FROM directory_scratch
        WHERE mem IS NOT NULL
    UNION ALL SELECT st, type, 0, 'connection', ctxcon ->> 'id', ctxcon ->> 'name', NULL, NULL,
        ctxcon ->> 'strategy', NULL FROM directory_scratch WHERE ctxcon IS NOT NULL""",
)


def _newer(column: str) -> str:
    """SET clause: `column` and its stamp take the incoming value when its stamp is newer (NULL is never newer)."""
    newer = f"excluded.{column}_at > coalesce({column}_at, -1)"
    return (
        f"{column} = CASE WHEN {newer} THEN excluded.{column} ELSE {column} END,"
        f" {column}_at = CASE WHEN {newer} THEN excluded.{column}_at ELSE {column}_at END"
    )


def _is_newer(column: str, table: str) -> str:
    return f"excluded.{column} > coalesce({table}.{column}, -1)"


def _take_newer(column: str, table: str) -> str:
    return f"{column} = CASE WHEN {_is_newer(column, table)} THEN excluded.{column} ELSE {table}.{column} END"


_ATTRS: Final = ("name", "display", "email", "detail", "parent")
_STAMPS: Final = (*(f"{a}_at" for a in _ATTRS), "created_at", "deleted_at")
_R: Final = {r.name: int(r) for r in Rel}
_UPTO: Final = "(SELECT value FROM counters WHERE name = 'directory_upto')"
_WINDOW: Final = f"e.seq > {_UPTO} AND e.seq <= NEW.last_seq AND NEW.last_seq - {_UPTO} <= NEW.max_gap"
# A BEFORE trigger that ends in RAISE(IGNORE): the work is kept, the directory_pending row is never stored.
_BODY: Final = f"""INSERT INTO directory_scratch SELECT e.seq, (e.time_ms << {STAMP_SHIFT}) | (e.seq & {(1 << STAMP_SHIFT) - 1}),
    e.type, CASE WHEN t.rel = {_R["GROUP_MEMBER"]} AND {_IS_CONNECTION} THEN {_R["GROUP_CONNECTION_MEMBER"]}
        ELSE t.rel END, t.adds,
    CASE WHEN t.mask & {int(_Has.USER)} THEN 'user' WHEN t.mask & {int(_Has.ORG)} THEN 'organization'
        WHEN t.mask & {int(_Has.GROUP)} THEN 'group' END,
    CASE WHEN t.mask & {int(_Has.USER)} THEN json_extract(e.raw, '$.event.data.object.user_id')
        WHEN t.mask & {int(_Has.ORG | _Has.GROUP)} THEN json_extract(e.raw, '$.event.data.object.id') END,
    {_x(_SUBJECT, ".name")}, {_x(_Has.ORG, ".display_name")}, {_x(_Has.USER, ".email")},
    {_x(_Has.GROUP, ".type")},
    coalesce({_x(_Has.GROUP, ".organization_id")}, {_x(_Has.GROUP, ".connection_id")}),
    {_x(_Has.ORG_REF, ".organization.id")}, {_x(_Has.ORG_REF, ".organization.name")},
    {_x(_Has.USER_REF, ".user.user_id")},
    {_x(_Has.GROUP_REF, ".group.id")}, {_x(_Has.GROUP_REF, ".group.name")}, {_x(_Has.GROUP_REF, ".group.type")},
    coalesce({_x(_Has.GROUP_REF, ".group.organization_id")}, {_x(_Has.GROUP_REF, ".group.connection_id")}),
    {_x(_Has.ROLE_REF, ".role.id")}, {_x(_Has.ROLE_REF, ".role.name")},
    {_x(_Has.CONNECTION_REF, ".connection.id")}, {_x(_Has.CONNECTION_REF, ".connection.name")},
    CASE WHEN t.mask & {int(_Has.MEMBER_REF)} THEN
        CASE WHEN {_IS_CONNECTION} THEN 'connection' ELSE 'user' END END,
    CASE WHEN t.mask & {int(_Has.MEMBER_REF)} THEN
        CASE WHEN {_IS_CONNECTION} THEN coalesce(json_extract(e.raw, '$.event.data.object.member.connection_id'),
            json_extract(e.raw, '$.event.data.object.member.id'))
        ELSE json_extract(e.raw, '$.event.data.object.member.id') END END,
    json_extract(e.raw, '$.event.data.context.connection')
FROM {{source}} AS e CROSS JOIN directory_types AS t ON t.type = e.type
WHERE {{window}} AND json_valid(e.raw);
INSERT INTO entities (kind, id, {", ".join(f"{a}, {a}_at" for a in _ATTRS)}, created_at, deleted_at)
SELECT kind, id, {", ".join(f"{a}, CASE WHEN {a} IS NOT NULL THEN st END" for a in _ATTRS)},
    CASE WHEN subject AND type LIKE '%.created' THEN st END, CASE WHEN subject AND type LIKE '%.deleted' THEN st END
FROM directory_mention WHERE id IS NOT NULL
ON CONFLICT (kind, id) DO UPDATE SET {", ".join(_newer(a) for a in _ATTRS)},
    {_take_newer("created_at", "entities")}, {_take_newer("deleted_at", "entities")}
WHERE {" OR ".join(_is_newer(s, "entities") for s in _STAMPS)};
INSERT INTO links (rel, a, b, c, added_at, removed_at)
SELECT rel, a, b, c, CASE WHEN adds THEN st END, CASE WHEN NOT adds THEN st END FROM (
    SELECT rel, adds, st, CASE WHEN rel <= {_R["ORG_GROUP_ROLE"]} THEN org ELSE grp END AS a,
        CASE rel WHEN {_R["ORG_MEMBER"]} THEN usr WHEN {_R["ORG_MEMBER_ROLE"]} THEN usr
            WHEN {_R["ORG_CONNECTION"]} THEN con WHEN {_R["ORG_GROUP_ROLE"]} THEN grp
            WHEN {_R["GROUP_ROLE"]} THEN role ELSE mem END AS b,
        CASE WHEN rel IN ({_R["ORG_MEMBER_ROLE"]}, {_R["ORG_GROUP_ROLE"]}) THEN role ELSE '' END AS c
    FROM directory_scratch WHERE rel IS NOT NULL)
WHERE a IS NOT NULL AND b IS NOT NULL AND c IS NOT NULL
ON CONFLICT (rel, a, b, c) DO UPDATE SET {_take_newer("added_at", "links")}, {_take_newer("removed_at", "links")}
WHERE {_is_newer("added_at", "links")} OR {_is_newer("removed_at", "links")};
UPDATE counters SET value = NEW.last_seq
    WHERE name = 'directory_upto' AND NEW.last_seq - value BETWEEN 1 AND NEW.max_gap;
DELETE FROM directory_scratch;
SELECT RAISE(IGNORE);"""  # noqa: S608 - constants only
_APPLY: Final = (
    "CREATE TRIGGER directory_apply BEFORE INSERT ON directory_pending BEGIN\n"
    + _BODY.format(source="events", window=_WINDOW)
    + "\nEND"
)
# `reindex` over events the archive holds: the same work over rows read back from its files into a table of the
# connection's own (a TEMP trigger may read it; the database's own trigger may not)
_ARCHIVED: Final = (
    "CREATE TEMP TABLE IF NOT EXISTS directory_archived"
    " (seq INTEGER PRIMARY KEY, time_ms INTEGER NOT NULL, type TEXT NOT NULL, raw TEXT NOT NULL)",
    "CREATE TEMP TABLE IF NOT EXISTS directory_archived_pending (last_seq INTEGER NOT NULL, max_gap INTEGER NOT NULL)",
    "CREATE TEMP TABLE IF NOT EXISTS directory_lake_pending (last_seq INTEGER NOT NULL, max_gap INTEGER NOT NULL)",
    "CREATE TEMP TRIGGER IF NOT EXISTS directory_apply_archived BEFORE INSERT ON directory_archived_pending BEGIN\n"
    + _BODY.format(source="temp.directory_archived", window=_WINDOW)
    + "\nEND",
    # the team archive's rows (lake_intake.py): every row given, its seq below every watermark (none moves)
    "CREATE TEMP TRIGGER IF NOT EXISTS directory_apply_lake BEFORE INSERT ON directory_lake_pending BEGIN\n"
    + _BODY.format(source="temp.directory_archived", window="e.seq <= NEW.last_seq")
    + "\nEND",
)


def install(conn: sqlite3.Connection) -> None:
    """Create (or bring up to date) the directory's helper tables, view and trigger; inside the caller's
    transaction (the schema migration, `tenant-events reindex`)."""
    for statement in _SCHEMA:
        conn.execute(statement)
    conn.execute("DELETE FROM directory_types")
    conn.executemany(
        "INSERT INTO directory_types (type, mask, rel, adds) VALUES (?, ?, ?, ?)",
        [(name, int(has), rel, adds) for name, (has, rel, adds) in _TYPES.items()],
    )
    conn.execute("DROP TRIGGER IF EXISTS directory_apply")
    conn.execute(_APPLY)


def advance(conn: sqlite3.Connection, upto_seq: int, max_gap: int) -> None:
    """Apply the stored events after the directory's watermark up to `upto_seq`, when they are at most `max_gap`
    seqs (one statement; the trigger does the work); inside the caller's transaction."""
    conn.execute("INSERT INTO directory_pending (last_seq, max_gap) VALUES (?, ?)", (upto_seq, max_gap))


def advance_archived(
    conn: sqlite3.Connection, rows: Iterable[tuple[int, int, str, str]], upto_seq: int
) -> None:
    """Apply archived events (seq, time_ms, type, raw JSON; read back from the archive's files) after the
    watermark up to `upto_seq`, and move the watermark there; inside the caller's transaction."""
    for statement in _ARCHIVED:
        conn.execute(statement)
    conn.executemany(
        "INSERT INTO temp.directory_archived (seq, time_ms, type, raw) VALUES (?, ?, ?, ?)", rows
    )
    gap = upto_seq - watermark(conn)
    conn.execute(
        "INSERT INTO temp.directory_archived_pending (last_seq, max_gap) VALUES (?, ?)", (upto_seq, gap)
    )
    conn.execute("DELETE FROM temp.directory_archived")


def advance_lake(conn: sqlite3.Connection, rows: Sequence[tuple[int, int, str, str]]) -> None:
    """Apply the team archive's events (seq, time_ms, type, raw JSON; lake seqs, below every stored one) without
    moving the watermark, which counts the database's own events; inside the caller's transaction."""
    if not ENABLED or not rows:
        return
    for statement in _ARCHIVED:
        conn.execute(statement)
    conn.executemany(
        "INSERT INTO temp.directory_archived (seq, time_ms, type, raw) VALUES (?, ?, ?, ?)", rows
    )
    last = max(r[0] for r in rows)
    # (the counter's update in the trigger never matches: `last_seq - value` is below 1 for a lake seq)
    conn.execute("INSERT INTO temp.directory_lake_pending (last_seq, max_gap) VALUES (?, 0)", (last,))
    conn.execute("DELETE FROM temp.directory_archived")


def types(conn: sqlite3.Connection) -> list[str]:
    """The event types the directory takes anything from."""
    return [str(r[0]) for r in conn.execute("SELECT type FROM directory_types ORDER BY type")]


def after_batch(conn: sqlite3.Connection, last_seq: int | None, events: int) -> None:
    """In a batch's transaction (`last_seq`: its last stored seq, None when it stored none): a small batch (live
    events) goes into the directory at once; a large one (a catch-up) is left to `catch_up`, which the writer runs
    when no batch has come for a while. A small batch while the directory is further behind is left to it too,
    without offering it to the trigger: its window's statement walks every seq the directory lacks before its
    gap test drops them all (75 ms of writer CPU a batch at 200,000 behind; a catch-up's slower moments make many
    small batches)."""
    if (
        ENABLED
        and last_seq is not None
        and events <= LIVE_BATCH
        and last_seq - watermark(conn) <= LIVE_BATCH * 2
    ):
        advance(conn, last_seq, LIVE_BATCH * 2)


def catch_up(conn: sqlite3.Connection, upto_seq: int) -> None:
    """In the indexer's transaction: bring the directory up to `upto_seq` (the rows it just indexed)."""
    if ENABLED:
        advance(conn, upto_seq, upto_seq)


def watermark(conn: sqlite3.Connection) -> int:
    """The last seq the directory covers: later events are not in it yet."""
    return int(conn.execute("SELECT value FROM counters WHERE name = 'directory_upto'").fetchone()[0])


def clear(conn: sqlite3.Connection) -> int:
    """Forget the directory; returns the last stored seq (inside the caller's transaction)."""
    for table in ("links", "entities"):
        conn.execute(f"DELETE FROM {table}")  # noqa: S608 - fixed table names
    conn.execute("UPDATE counters SET value = 0 WHERE name = 'directory_upto'")
    return int(conn.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()[0])


def rebuild(conn: sqlite3.Connection, progress: Callable[[int, int], object] | None = None) -> None:
    """Build the directory again from every stored event, inside the caller's transaction (schema migration);
    `progress(done_seq, last_seq)` after each chunk."""
    top = clear(conn)
    for low in range(1, top + 1, REBUILD_CHUNK):
        high = min(top, low + REBUILD_CHUNK - 1)
        advance(conn, high, REBUILD_CHUNK)
        if progress is not None:
            progress(high, top)


def install_and_rebuild(conn: sqlite3.Connection) -> None:
    """The schema migration's follow-up: create the helpers, then fill the directory from the stored events
    (about 20 µs an event: a minute for a few million, once)."""
    install(conn)
    rebuild(conn, lambda done, total: log.info("entity directory: %d of %d stored events", done, total))
