"""Keeps the access history: for every membership, role assignment and connection, the spans of time it held.

Where it sits: the writer thread's idle-time indexer (indexer.py) calls `catch_up` in each of its transactions,
after the entity directory's, so a live batch's transaction never pays for it. `access_upto` says how far it goes;
readers (access_reader.py) count later events as not in it yet, and `tenant-events access` brings it up to date
itself (reindex.py `catch_up_access`). The schema migration only makes the tables: the indexer fills them from the events
already stored, a chunk a transaction.

Tables (schema 7):
  access_marks   each link event: the link's key, its stamp and seq, whether it adds
  access_ends    each deletion of a user, organization or group: what ends every link of that entity
  access_groups  each group's type and parent, newest by stamp (an organization's group ends with it)
  access_spans   what a reader asks: per link, [since, until) stamps with the events that began and ended it
                 (until = HOLDS while it holds), and its reach: how long it held, as a power of two
                 (access_facts.reach). A span holding at moment t began less than 2^(reach+1) before t, so a
                 moment is one short range query on (reach, since) per reach: the rows read are about twice the
                 spans that hold, however long the history (a range on since or until alone reads half of it)

Each chunk notes the marks and deletions its events make, then works out again, from everything noted, the spans
of every link they touch: the link's own events, every link of a deleted entity (of a deleted organization's
groups too), the roles of a member who left, the links of a group whose organization became known. Nothing
depends on the order events arrive in (access_facts.py), so a late event, a rebuild and a second process catching
up all meet at the same spans.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Iterable
from typing import Any, Final

import orjson

from tenant_events.store import access_settled
from tenant_events.store.access_events import Row, database_path, history_rows
from tenant_events.store.access_facts import (
    BEFORE,
    END_KINDS,
    TYPES,
    Facts,
    Key,
    Mark,
    Span,
    group_ends,
    link_spans,
    reach,
)
from tenant_events.store.access_settled import listed, settled_point, with_history
from tenant_events.store.directory import LIVE_BATCH, STAMP_SHIFT, Rel

CHUNK: Final = 2000  # stored seqs a transaction: about 20 ms of the writer thread's idle time
_SEQ_MASK: Final = (1 << STAMP_SHIFT) - 1
_TYPES: Final = tuple(sorted(TYPES))

SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS access_marks (
    rel INTEGER NOT NULL, a TEXT NOT NULL, b TEXT NOT NULL, c TEXT NOT NULL,
    at INTEGER NOT NULL,  -- the event's stamp (directory.py: time_ms << 20 | seq)
    seq INTEGER NOT NULL,
    adds INTEGER NOT NULL,
    PRIMARY KEY (rel, a, b, c, at)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS access_marks_b ON access_marks(b, rel);
CREATE TABLE IF NOT EXISTS access_ends (
    kind TEXT NOT NULL, id TEXT NOT NULL, at INTEGER NOT NULL, seq INTEGER NOT NULL,
    PRIMARY KEY (kind, id, at)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS access_groups (
    id TEXT PRIMARY KEY, type TEXT, type_at INTEGER, parent TEXT, parent_at INTEGER
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS access_groups_parent ON access_groups(parent);
CREATE TABLE IF NOT EXISTS access_spans (
    rel INTEGER NOT NULL, a TEXT NOT NULL, b TEXT NOT NULL, c TEXT NOT NULL,
    since INTEGER NOT NULL,  -- stamp of the add that began it
    until INTEGER NOT NULL,  -- stamp of the first ending after it, access_facts.HOLDS (2^62) while it holds
    since_seq INTEGER NOT NULL,
    until_seq INTEGER,
    reach INTEGER NOT NULL,  -- access_facts.reach(since, until): until - since < 2^(reach + 1)
    PRIMARY KEY (rel, a, b, c, since)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS access_spans_reach ON access_spans(reach, since, until);
INSERT OR IGNORE INTO counters (name, value) VALUES ('access_upto', 0);
"""
_TABLES: Final = ("access_marks", "access_ends", "access_groups", "access_spans")
_KEY: Final = (
    "{t}.rel = j.value ->> 0 AND {t}.a = j.value ->> 1 AND {t}.b = j.value ->> 2 AND {t}.c = j.value ->> 3"
)
# The last span of each link that began at or before a stamp (an index seek from that stamp backwards).
# The last span of each link that began at or before a stamp, as [since, until] (one index seek backwards).
_LAST_SPAN: Final = (
    "SELECT j.value ->> 0, j.value ->> 1, j.value ->> 2, j.value ->> 3, j.value ->> 4,"  # noqa: S608 - constants
    " (SELECT json_array(s.since, s.until) FROM access_spans AS s WHERE " + _KEY.format(t="s") + " AND"
    " s.since <= j.value ->> 4 ORDER BY s.since DESC LIMIT 1) FROM json_each(?) AS j"
)
_MARKS_FROM: Final = (
    "SELECT m.rel, m.a, m.b, m.c, m.at, m.seq, m.adds FROM json_each(?) AS j CROSS JOIN access_marks AS m"  # noqa: S608
    " ON " + _KEY.format(t="m") + " AND m.at >= j.value ->> 4"
)
_ENDS_FROM: Final = (
    "SELECT e.kind, e.id, e.at, e.seq FROM json_each(?) AS j CROSS JOIN access_ends AS e"
    " ON e.kind = j.value ->> 0 AND e.id = j.value ->> 1 AND e.at >= j.value ->> 2"
)
_SPANS_FROM: Final = (
    "SELECT s.rel, s.a, s.b, s.c, s.since, s.since_seq, s.until, s.until_seq FROM json_each(?) AS j"  # noqa: S608
    " CROSS JOIN access_spans AS s ON " + _KEY.format(t="s") + " AND s.since >= j.value ->> 4"
)
_GROUPS_OF: Final = (
    "SELECT g.id, g.type, g.parent FROM json_each(?) AS j CROSS JOIN access_groups AS g ON g.id = j.value"
)


def watermark(conn: sqlite3.Connection) -> int:
    """The last stored seq the access history covers."""
    row = conn.execute("SELECT value FROM counters WHERE name = 'access_upto'").fetchone()
    return int(row[0]) if row else 0


def clear(conn: sqlite3.Connection) -> None:
    """Forget the history (`tenant-events reindex` builds it again); inside the caller's transaction."""
    for table in _TABLES:
        conn.execute(f"DELETE FROM {table}")  # noqa: S608 - fixed table names
    access_settled.clear(conn)
    conn.execute("UPDATE counters SET value = 0 WHERE name = 'access_upto'")
    conn.execute("DELETE FROM counters WHERE name = 'access_from_ms'")


def catch_up(conn: sqlite3.Connection, upto_seq: int, limit: int = CHUNK) -> bool:
    """Take in the stored events after the watermark, up to `upto_seq` and at most `limit` seqs; inside the
    caller's transaction. True when more remain below `upto_seq`."""
    low = watermark(conn)
    high = min(upto_seq, low + limit)
    if high <= low:
        return False
    rows, first_ms = history_rows(conn, low, high, _TYPES)  # archived ones too (access_events.py)
    take_in(conn, rows, first_ms)
    conn.execute("UPDATE counters SET value = ? WHERE name = 'access_upto'", (high,))
    return high < upto_seq


def take_in(conn: sqlite3.Connection, rows: Iterable[Row], first_ms: int | None) -> None:
    """Events (seq, time_ms, type, raw JSON; of any type: others are passed over) into the history, and
    `first_ms`, the earliest time of any event among them, into where it is complete from; inside the caller's
    transaction. The watermark is the caller's: the team archive's rows (lake_intake.py) are not below it."""
    facts = Facts()
    settled = settled_point(conn)  # a fact stamped before it counts from it on (access_settle.py)
    for seq, time_ms, event_type, raw in rows:
        if event_type not in TYPES:
            continue
        data = _data(raw)
        if data is not None:
            facts.add(event_type, max(time_ms << STAMP_SHIFT, settled) | (seq & _SEQ_MASK), seq, data)
    _note(conn, facts)
    _rework(conn, _touched(conn, facts))
    if first_ms is not None:
        conn.execute(
            "INSERT INTO counters (name, value) VALUES ('access_from_ms', ?)"
            " ON CONFLICT (name) DO UPDATE SET value = min(value, excluded.value)",
            (first_ms,),
        )


def _data(raw: str) -> dict[str, Any] | None:
    """An event's `data` from its stored message (orjson: several times faster than SQLite's own JSON)."""
    try:
        data = orjson.loads(raw)["event"]["data"]
    except (orjson.JSONDecodeError, KeyError, TypeError):
        return None
    return data if isinstance(data, dict) else None


def after_batch(conn: sqlite3.Connection, last_seq: int | None, events: int) -> None:
    """In a batch's transaction (`last_seq`: its last stored seq, None when it stored none): a small batch (live
    events) goes into the history at once when the history is not behind; anything else waits for `catch_up`."""
    if last_seq is not None and events <= LIVE_BATCH and last_seq - watermark(conn) <= 2 * LIVE_BATCH:
        catch_up(conn, last_seq, 2 * LIVE_BATCH)


def _note(conn: sqlite3.Connection, facts: Facts) -> None:
    """Store the chunk's marks, deletions and groups' newest type and parent."""
    conn.executemany(
        "INSERT OR IGNORE INTO access_marks (rel, a, b, c, at, seq, adds) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(*key, stamp, seq, int(adds)) for key, stamp, seq, adds in facts.marks],
    )
    conn.executemany("INSERT OR IGNORE INTO access_ends (kind, id, at, seq) VALUES (?, ?, ?, ?)", facts.ends)
    changed = []
    for ident, attrs in facts.groups.items():
        type_at, kind = attrs.get("type", (None, None))
        parent_at, parent = attrs.get("parent", (None, None))
        before = conn.execute("SELECT type, parent FROM access_groups WHERE id = ?", (ident,)).fetchone()
        conn.execute(
            "INSERT INTO access_groups (id, type, type_at, parent, parent_at) VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT (id) DO UPDATE SET"
            " type = CASE WHEN excluded.type_at > coalesce(type_at, -1) THEN excluded.type ELSE type END,"
            " type_at = max(coalesce(type_at, -1), coalesce(excluded.type_at, -1)),"
            " parent = CASE WHEN excluded.parent_at > coalesce(parent_at, -1) THEN excluded.parent ELSE parent END,"
            " parent_at = max(coalesce(parent_at, -1), coalesce(excluded.parent_at, -1))",
            (ident, kind, type_at, parent, parent_at),
        )
        after = conn.execute("SELECT type, parent FROM access_groups WHERE id = ?", (ident,)).fetchone()
        if before is None or tuple(before) != tuple(after):
            changed.append(ident)
    facts.groups = {ident: {} for ident in changed}  # what _touched must look at again


def _keys(conn: sqlite3.Connection, sql: str, args: tuple[str, ...]) -> set[Key]:
    return {(int(r), str(a), str(b), str(c)) for r, a, b, c in conn.execute(sql, args)}


def _group_keys(conn: sqlite3.Connection, group: str) -> set[Key]:
    return _keys(
        conn,
        "SELECT DISTINCT rel, a, b, c FROM access_marks WHERE rel IN (5, 6, 7) AND a = ?"
        " UNION SELECT DISTINCT rel, a, b, c FROM access_marks WHERE b = ? AND rel = 4",
        (group, group),
    )


def _touched(conn: sqlite3.Connection, facts: Facts) -> dict[Key, int]:
    """Every link whose spans the chunk may have changed, with the earliest stamp it changed them at (-1: from
    the start: a group's organization became known)."""
    touched: dict[Key, int] = {}

    def touch(keys: Iterable[Key], at: int) -> None:
        for key in keys:
            touched[key] = min(at, touched.get(key, at))

    for key, stamp, _seq, adds in facts.marks:
        touch([key], stamp)
        if key[0] == Rel.ORG_MEMBER and not adds:  # the member's roles in that organization end with it
            touch(
                _keys(
                    conn,
                    "SELECT DISTINCT rel, a, b, c FROM access_marks WHERE rel = 2 AND a = ? AND b = ?",
                    (key[1], key[2]),
                ),
                stamp,
            )
    for kind, ident, stamp, _seq in facts.ends:
        if kind == "user":
            sql = "SELECT DISTINCT rel, a, b, c FROM access_marks WHERE b = ? AND rel IN (1, 2, 5)"
            touch(_keys(conn, sql, (ident,)), stamp)
        elif kind == "organization":
            sql = "SELECT DISTINCT rel, a, b, c FROM access_marks WHERE rel IN (1, 2, 3, 4) AND a = ?"
            touch(_keys(conn, sql, (ident,)), stamp)
            for (group,) in conn.execute(
                "SELECT id FROM access_groups WHERE parent = ? AND type = 'organization'", (ident,)
            ).fetchall():
                touch(_group_keys(conn, str(group)), stamp)
        else:
            touch(_group_keys(conn, ident), stamp)
    for group in facts.groups:
        touch(_group_keys(conn, group), -1)
    return touched


def _starts(conn: sqlite3.Connection, points: dict[Key, int]) -> tuple[dict[Key, int], set[Key]]:
    """Where each link's spans must be worked out again: the start of the span its earliest change falls in,
    else the change itself. Before that the spans stand; at it the link does not hold. And the links worked out
    from their first own event on (link_spans' `whole`): those with no span at or before the change (every own
    event of theirs is at or after it: an earlier one would have made a span), and those whose last span at or
    before the change began before the history, whether or not it still held then: it ends at whatever ended the
    link first, and whether it was held at all rests on the link's first own event being a removal, which a late
    add before that removal undoes (a user deleted, then added and removed again, the removal delivered first).
    Between that span and the change there are no adds, so reading from the beginning reads little more."""
    wanted = orjson.dumps([[*key, at] for key, at in points.items()]).decode()
    out: dict[Key, int] = {}
    whole: set[Key] = set()
    for rel, a, b, c, at, last in conn.execute(_LAST_SPAN, (wanted,)):
        key = (rel, a, b, c)
        since, until = orjson.loads(last) if last is not None else (None, None)
        anchored = since is not None and until > at
        out[key] = since if anchored and since is not None else at
        if since is None or since == BEFORE:
            whole.add(key)
            out[key] = -1
    return out, whole


def _rework(conn: sqlite3.Connection, points: dict[Key, int]) -> None:
    """Work out the spans of the links in `points` again, from where each may have changed on: a link whose
    newest events arrive in order is one span read, one begun or ended, however long its history."""
    if not points:
        return
    starts, whole = _starts(conn, points)
    bounds = dict(
        starts
    )  # what to read of each link's marks: its own start, or a role's that its leaving ends
    for key, start in starts.items():
        if key[0] == Rel.ORG_MEMBER_ROLE:
            member = (int(Rel.ORG_MEMBER), key[1], key[2], "")
            bounds[member] = min(start, bounds.get(member, start))
    marks: dict[Key, list[Mark]] = defaultdict(list)
    for rel, a, b, c, at, seq, adds in conn.execute(_MARKS_FROM, (_bounded(bounds),)):
        marks[(rel, a, b, c)].append((at, seq, adds == 1))  # (the columns' types: no conversion needed)
    groups = {k[1 + pos] for k in starts for pos in group_ends(k[0])}
    parents = {
        g: parent
        for g, kind, parent in conn.execute(_GROUPS_OF, (orjson.dumps(sorted(groups)).decode(),))
        if kind == "organization" and parent is not None
    }
    ended: dict[
        tuple[str, str], int
    ] = {}  # an entity whose deletions matter, from the earliest start needing them
    for key, start in starts.items():
        entities: list[tuple[str, str]] = [(kind, key[1:][pos]) for pos, kind in enumerate(END_KINDS[key[0]])]
        entities += [("organization", parents[g]) for kind, g in entities if kind == "group" and g in parents]
        for entity in entities:
            ended[entity] = min(start, ended.get(entity, start))
    ends: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
    wanted = orjson.dumps([[kind, ident, at] for (kind, ident), at in ended.items()]).decode()
    for kind, ident, at, seq in conn.execute(_ENDS_FROM, (wanted,)):
        ends[(kind, ident)].append((at, seq))
    old: dict[Key, set[Span]] = defaultdict(set)
    for rel, a, b, c, since, since_seq, until, until_seq in conn.execute(_SPANS_FROM, (_bounded(starts),)):
        old[(rel, a, b, c)].add((since, since_seq, until, until_seq))
    gone, made = [], []
    whole -= _settled_links(conn, whole, marks)
    for key, start in starts.items():
        own = [m for m in marks.get(key, ()) if m[0] >= start]
        endings = [e for e in _endings(key, marks, ends, parents) if e[0] >= start]
        new = link_spans(own, endings, key in whole)
        before = old.get(key, set())
        gone += [(*key, span[0]) for span in before.difference(new)]
        made += [(*key, *span, reach(span[0], span[2])) for span in new if span not in before]
    # Most changes are one span begun or one ended: a row or two written, not the link's whole history again.
    conn.executemany(
        "DELETE FROM access_spans WHERE rel = ? AND a = ? AND b = ? AND c = ? AND since = ?", gone
    )
    conn.executemany(
        "INSERT INTO access_spans (rel, a, b, c, since, since_seq, until, until_seq, reach)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        made,
    )


def _settled_links(conn: sqlite3.Connection, whole: set[Key], marks: dict[Key, list[Mark]]) -> set[Key]:
    """The links among `whole` whose first own event here is a removal but whose history began before the
    settled point (access_settled.py): their earlier events are settled, so the removal is not their first."""
    first_removed = {k for k in whole if marks.get(k) and not min(marks[k])[2]}
    if not first_removed or not settled_point(conn):
        return set()
    return with_history(listed(conn, database_path(conn)), first_removed)


def _bounded(bounds: dict[Key, int]) -> str:
    return orjson.dumps([[*key, at] for key, at in bounds.items()]).decode()


def _endings(
    key: Key,
    marks: dict[Key, list[Mark]],
    ends: dict[tuple[str, str], list[tuple[int, int]]],
    parents: dict[str, str],
) -> list[tuple[int, int]]:
    """What ends a link besides its own removals: its ends' deletions, its groups' organizations' deletions, and
    for a member's role the member leaving the organization."""
    rel, ids = key[0], key[1:]
    out: list[tuple[int, int]] = []
    for pos, kind in enumerate(END_KINDS[rel]):
        out += ends.get((kind, ids[pos]), ())
        if kind == "group" and ids[pos] in parents:
            out += ends.get(("organization", parents[ids[pos]]), ())
    if rel == Rel.ORG_MEMBER_ROLE:
        member = (int(Rel.ORG_MEMBER), key[1], key[2], "")
        out += [(at, seq) for at, seq, adds in marks.get(member, ()) if not adds]
    return out


def backlog(conn: sqlite3.Connection) -> int:
    """Stored seqs the history has not taken in yet."""
    row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'events'").fetchone()
    return max(0, (int(row[0]) if row else 0) - watermark(conn))
