"""The stored events that name one entity, newest first, found through the full-text index.

Why no index of its own: every stored event's raw JSON is already in `events_fts`, and an entity's id is there
as tokens (`auth0|3de8f2…` → `auth0`, `3de8f2…`). The longest token of the id finds the candidates (FTS5 walks a
term's rows by rowid, newest first, and stops at the page size); each candidate is then checked with
wire/references.py, so the timeline holds exactly the events that name the entity (a token that
also occurs elsewhere, as a user's identity id does in its own user events, costs a check, never a wrong row).
Rows the indexer has not reached yet (writer.py) are searched by substring, as text search does (query.py). An
index maintained with every batch would have cost ingest what the directory cost in its transaction
(store/directory.py); this costs none.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from typing import Final

import orjson

from tenant_events.store import archive_catalog, team_view
from tenant_events.store.archive_catalog import ArchiveSnapshot
from tenant_events.store.archive_reader import ArchiveReader
from tenant_events.store.live_walk import COLUMNS as _COLUMNS
from tenant_events.store.live_walk import NO_LOW
from tenant_events.store.live_walk import event_of as _event
from tenant_events.store.query_sql import unescaped_runs
from tenant_events.values.events import EventFilter, StoredEvent
from tenant_events.wire.references import names, references

_TOKEN: Final = re.compile(r"[^\W_]+")  # FTS5 unicode61: letters and digits make tokens, the rest separates
_NEWEST: Final = 2**63 - 1
HISTORY_LOOKS: Final = 10_000  # versions of one entity `objects_of` reads, newest first


def fts_token(entity_id: str) -> str | None:
    """The longest token FTS5 makes of the id (the rarest, in practice), or None when it makes none."""
    tokens = _TOKEN.findall(entity_id)
    return max(tokens, key=len) if tokens else None


def _concerns(row: tuple[object, ...], kind: str, entity_id: str) -> bool:
    try:
        data = orjson.loads(str(row[-1]))["event"]["data"]
    except (orjson.JSONDecodeError, KeyError, TypeError):
        return False
    return isinstance(data, dict) and names(str(row[3]), data, kind, entity_id)


def _tail(
    conn: sqlite3.Connection,
    needle: str,
    low: int,
    high: int,
    chunk: int,
    types: tuple[str, ...] = (),
) -> Iterator[tuple[object, ...]]:
    """Rows with `low < seq < high` whose raw JSON contains `needle`, newest first; only of `types` when given
    (found through the type index: a catch-up's unindexed backlog is read for those types only)."""
    of_types = f" AND type IN ({','.join('?' * len(types))})" if types else ""
    while high > low + 1:
        rows = conn.execute(
            f"SELECT {_COLUMNS}, raw FROM events WHERE seq > ? AND seq < ?{of_types}"  # noqa: S608
            " AND instr(raw, ?) > 0 ORDER BY seq DESC LIMIT ?",
            (low, high, *types, needle, chunk),
        ).fetchall()
        yield from rows
        if len(rows) < chunk:
            return
        high = int(rows[-1][0])


def _indexed(
    conn: sqlite3.Connection, token: str, high: int, chunk: int, low: int = 0
) -> Iterator[tuple[object, ...]]:
    """Rows in (low, high) the full-text index has for `token` in the raw JSON, newest first."""
    match = 'raw : "' + token.replace('"', '""') + '"'
    while high > low + 1:
        rows = conn.execute(
            f"SELECT {_COLUMNS}, raw FROM (SELECT rowid AS hit FROM events_fts"  # noqa: S608
            " WHERE events_fts MATCH ? AND rowid < ? AND rowid > ? ORDER BY rowid DESC LIMIT ?)"
            " CROSS JOIN events ON seq = hit ORDER BY hit DESC",
            (match, high, low, chunk),
        ).fetchall()
        yield from rows
        if len(rows) < chunk:
            return
        high = int(rows[-1][0])


def _snapshot(conn: sqlite3.Connection, archive: ArchiveReader | None) -> ArchiveSnapshot:
    """Both tiers' catalog, with the team archive's rows when there is an archive reader to read them."""
    return archive_catalog.snapshot(conn) if archive is None else team_view.snapshot(conn, archive.folder)


def page(
    conn: sqlite3.Connection,
    kind: str,
    entity_id: str,
    before_seq: int | None,
    limit: int,
    archive: ArchiveReader | None = None,
) -> list[StoredEvent]:
    """Up to `limit` events stored before `before_seq` that name (kind, entity_id), newest first, with raw JSON;
    with `archive`, the archive tier's after the live table's (one snapshot of both, reader.py)."""
    before = _NEWEST if before_seq is None else before_seq
    chunk = max(16, min(limit * 2, 2000))
    out: list[StoredEvent] = []
    token = fts_token(entity_id)
    conn.execute("BEGIN")  # one snapshot: the indexer may move rows from the tail into the index meanwhile
    try:
        snap = _snapshot(conn, archive)
        upto = int(conn.execute("SELECT value FROM counters WHERE name = 'fts_upto'").fetchone()[0])
        sources = [_tail(conn, entity_id, max(upto, snap.upto), before, chunk)]
        if token is not None:
            sources.append(_indexed(conn, token, min(before, upto + 1), chunk, snap.upto))
        else:  # an id with no letters or digits: nothing to look up, read every row
            sources.append(_tail(conn, entity_id, snap.upto, min(before, upto + 1), chunk))
        for source in sources:
            for row in source:
                if _concerns(row, kind, entity_id):
                    out.append(_event(row[:-1], str(row[-1])))
                    if len(out) == limit:
                        return out
    finally:
        conn.execute("COMMIT")
    if archive is None or not snap.files:
        return out
    archive.use(snap)
    high = min(before, snap.upto + 1)
    for event in archive.naming(snap, token, entity_id, high, chunk):
        data = orjson.loads(event.raw or "{}").get("event", {}).get("data")
        if isinstance(data, dict) and names(event.type, data, kind, entity_id):
            out.append(event)
            if len(out) == limit:
                break
    return out


def objects_of(
    conn: sqlite3.Connection,
    kind: str,
    entity_id: str,
    archive: ArchiveReader | None = None,
    limit: int = HISTORY_LOOKS,
    before: int | None = None,
) -> list[tuple[int, dict[str, object]]]:
    """(seq, `data.object`) of every `<kind>.created` or `<kind>.updated` event about the entity, oldest first
    (the newest `limit`): the entity as each of them left it, so its name at any event's time is one look-up
    (entities/sentences.py `NamesThen`). The full-text index narrows to events whose raw JSON holds the id and
    whose summary says "<kind> … created/updated"; the unindexed tail is searched by substring; with `archive`,
    the archive tier's after the live table's (one snapshot of both, as `page`). With `before`, only events
    stored before that seq: the tail after it is not searched (a catch-up's names at an early event's time)."""
    high = _NEWEST if before is None else before
    conn.execute("BEGIN")  # one snapshot, as `page`
    try:
        snap = _snapshot(conn, archive)
        upto = int(conn.execute("SELECT value FROM counters WHERE name = 'fts_upto'").fetchone()[0])
        found = _live_objects(conn, kind, entity_id, upto, high, limit)
    finally:
        conn.execute("COMMIT")
    if archive is not None and snap.files and len(found) < limit:
        archive.use(snap)
        _archived_objects(archive, snap, kind, entity_id, found, limit)
    return sorted(found, key=lambda pair: pair[0])


def objects_of_many(
    conn: sqlite3.Connection,
    keys: Iterable[tuple[str, str]],
    archive: ArchiveReader | None = None,
    limit: int = HISTORY_LOOKS,
    floors: Mapping[tuple[str, str], int] | None = None,
) -> dict[tuple[str, str], list[tuple[int, dict[str, object]]]]:
    """`objects_of` of each (kind, id) key, in one snapshot, with one archive statement for them all instead of
    one a key: an access diff names thousands of entities, and over a team's archive each statement reads the
    token lists of every file (the live tier's look-ups stay one a key: each is a short index read). With
    `floors`, a key's versions are wanted only as far as they say the entity at seqs from its floor on: one whose
    live tier holds a version below its floor is not looked up in the archive (all of the archive's are older),
    and its list may lack versions older than that one (a page of the table's newest rows: its entities' latest
    versions are usually live)."""
    asked = list(dict.fromkeys(keys))
    floors = floors or {}
    conn.execute("BEGIN")
    try:
        snap = _snapshot(conn, archive)
        upto = int(conn.execute("SELECT value FROM counters WHERE name = 'fts_upto'").fetchone()[0])
        found = {key: _live_objects(conn, *key, upto, _NEWEST, limit) for key in asked}
    finally:
        conn.execute("COMMIT")
    if archive is not None and snap.files:
        archive.use(snap)
        tokens = {
            key: fts_token(key[1])
            for key in asked
            if len(found[key]) < limit and not _enough(found[key], floors.get(key))
        }
        for key, token in tokens.items():
            if token is None:  # (no token to look up: the raw JSON searched, as `objects_of` does)
                _archived_objects(archive, snap, *key, found[key], limit)
        by_type = {f"{kind}.{verb}": kind for kind, _id in tokens for verb in ("created", "updated")}
        looked = {key: token for key, token in tokens.items() if token is not None}
        events = archive.naming_any(snap, set(looked.values()), set(by_type), snap.upto + 1)
        for event, held in events:
            kind = by_type[event.type]
            obj = _object_of(event.raw or "{}")
            ident = obj.get("user_id" if kind == "user" else "id") if obj is not None else None
            own = (kind, ident) if isinstance(ident, str) else None
            if obj is not None and own in looked and looked[own] in held and len(found[own]) < limit:
                found[own].append((event.seq, obj))
    return {key: sorted(pairs, key=lambda pair: pair[0]) for key, pairs in found.items()}


def _enough(versions: list[tuple[int, dict[str, object]]], floor: int | None) -> bool:
    """Whether one of the versions was stored before `floor` (None: every version is wanted)."""
    return floor is not None and any(seq < floor for seq, _obj in versions)


def _live_objects(
    conn: sqlite3.Connection, kind: str, entity_id: str, upto: int, high: int, limit: int
) -> list[tuple[int, dict[str, object]]]:
    """The entity's own created/updated events below `high` in the live table (inside the caller's
    transaction), newest first: the unindexed tail by substring, then the full-text index."""
    wanted = (f"{kind}.created", f"{kind}.updated")
    found: list[tuple[int, dict[str, object]]] = []
    token = fts_token(entity_id)
    sources = [_tail(conn, entity_id, upto, high, 2000, wanted)]
    if token is not None:
        sources.append(_own_events(conn, kind, token, min(upto + 1, high), limit))
    for source in sources:
        for row in source:
            if len(found) < limit and (
                obj := _own_object(str(row[3]), str(row[-1]), wanted, kind, entity_id)
            ):
                found.append((int(str(row[0])), obj))
    return found


def _archived_objects(
    archive: ArchiveReader,
    snap: ArchiveSnapshot,
    kind: str,
    entity_id: str,
    found: list[tuple[int, dict[str, object]]],
    limit: int,
) -> None:
    """The entity's own created/updated events in the archive tier, newest first, added to `found` up to
    `limit` in all."""
    wanted = (f"{kind}.created", f"{kind}.updated")
    for event in archive.naming(snap, fts_token(entity_id), entity_id, snap.upto + 1, 500):
        if len(found) >= limit:
            break
        if obj := _own_object(event.type, event.raw or "{}", wanted, kind, entity_id):
            found.append((event.seq, obj))


def _object_of(raw: str) -> dict[str, object] | None:
    """The event's `data.object` (None: not an object)."""
    try:
        obj = orjson.loads(raw)["event"]["data"]["object"]
    except (orjson.JSONDecodeError, KeyError, TypeError):
        return None
    return obj if isinstance(obj, dict) else None


def _own_object(
    event_type: str, raw: str, wanted: tuple[str, ...], kind: str, entity_id: str
) -> dict[str, object] | None:
    """The event's `data.object` when it is one of the entity's own created/updated events, else None."""
    if event_type not in wanted:
        return None
    obj = _object_of(raw)
    ok = obj is not None and obj.get("user_id" if kind == "user" else "id") == entity_id
    return obj if ok else None


def _own_events(
    conn: sqlite3.Connection, kind: str, token: str, high: int, limit: int
) -> Iterator[tuple[object, ...]]:
    """Indexed rows below `high` with the id's token in the raw JSON and a summary of the entity's own kind
    created or updated ("Organization Acme Cloud updated"), newest first."""
    quoted = '"' + token.replace('"', '""') + '"'
    match = f'raw : {quoted} AND summary : "{kind}" AND (summary : "created" OR summary : "updated")'
    yield from conn.execute(
        f"SELECT {_COLUMNS}, raw FROM (SELECT rowid AS hit FROM events_fts"  # noqa: S608
        " WHERE events_fts MATCH ? AND rowid < ? ORDER BY rowid DESC LIMIT ?)"
        " CROSS JOIN events ON seq = hit ORDER BY hit DESC",
        (match, high, limit),
    )


FORMER_LOOKS: Final = 10_000  # created/updated events of the kind read, newest first, before giving up


def ids_once_called(conn: sqlite3.Connection, kind: str, name: str) -> list[str]:
    """Ids of the entities of `kind` that some stored created/updated event called `name` (any case): a name it
    had once, renamed since. Newest first; the live tier only (the type index narrows to those events, the raw
    JSON to the ones holding the name)."""
    wanted = name.casefold()
    ident = "user_id" if kind == "user" else "id"
    found: dict[str, None] = {}
    # the longest part of the name a JSON encoder writes as it is ("O'Brien" may come as `O\\u0027Brien`)
    runs = unescaped_runs(name)
    needle = max(runs, key=len) if runs else name
    rows = conn.execute(
        "SELECT raw FROM events WHERE type IN (?, ?) AND instr(lower(raw), ?) > 0 ORDER BY seq DESC LIMIT ?",
        (f"{kind}.created", f"{kind}.updated", needle.lower(), FORMER_LOOKS),
    )
    for (raw,) in rows:
        try:
            obj = orjson.loads(str(raw))["event"]["data"]["object"]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            continue
        if not isinstance(obj, dict) or not isinstance(obj.get(ident), str):
            continue
        called = (obj.get(k) for k in ("name", "display_name", "email"))
        if any(isinstance(c, str) and c.casefold() == wanted for c in called):
            found[obj[ident]] = None
    return list(found)


# the events whose object names itself (wire/references.py: a subject with a name)
OWN_TYPES: Final = (
    "user.created",
    "user.updated",
    "organization.created",
    "organization.updated",
    "group.created",
    "group.updated",
)


def every_name(
    conn: sqlite3.Connection, archive: ArchiveReader | None = None
) -> dict[tuple[str, str], tuple[list[int], list[str | None]]]:
    """Each entity's names, as each of its own created/updated events called it, by seq (oldest first): for a
    whole export, one read of those events instead of a look-up per entity (`objects_of`); with `archive`, the
    archive tier's too (one snapshot of both)."""
    conn.execute("BEGIN")
    try:
        snap = _snapshot(conn, archive)
        live = conn.execute(
            f"SELECT seq, type, raw FROM events WHERE type IN ({', '.join('?' * len(OWN_TYPES))}) ORDER BY seq",  # noqa: S608
            OWN_TYPES,
        ).fetchall()
    finally:
        conn.execute("COMMIT")
    rows: list[tuple[int, str, str]] = []
    if archive is not None and snap.files:
        archive.use(snap)
        own, low = EventFilter(types=frozenset(OWN_TYPES)), NO_LOW
        while True:
            chunk = archive.walk(snap, own, {}, low, snap.upto + 1, 5000, newest_first=False, raw=True)
            rows += [(e.seq, e.type, e.raw or "{}") for e in chunk]
            if len(chunk) < 5000:
                break
            low = chunk[-1].seq
    out: dict[tuple[str, str], tuple[list[int], list[str | None]]] = {}
    for seq, kind, raw in [*rows, *live]:
        try:
            data = orjson.loads(raw)["event"]["data"]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            continue
        if not isinstance(data, dict):
            continue
        subject = next((r for r in references(str(kind), data) if r.place == "subject"), None)
        if subject is not None:
            seqs, called = out.setdefault((subject.kind, subject.id), ([], []))
            seqs.append(int(seq))
            called.append(subject.name)
    return out
