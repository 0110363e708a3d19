"""Read API over one tenant's entity directory: look entities up, an entity's state, its timeline.

Its own read-only connection (like `EventReader`); calls are serialised by a lock. Names for summary sentences
come from `entities` (one query for a page of rows), an entity's state from entity_state.py and timelines from
timeline_query.py. What the live directory lacks is looked for in its settled past (directory_settled.py): the
names of entities deleted long ago, their links.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson

from tenant_events.store import archive_catalog, directory_settled, team_view, timeline_query
from tenant_events.store.archive_layout import folder_of
from tenant_events.store.archive_reader import ArchiveReader
from tenant_events.store.connections import HeldConnection, HoldsConnection
from tenant_events.store.directory_settled import NOTHING, SettledDirectory
from tenant_events.store.entity_records import STAMP_SHIFT, Entity, EntityState, Relation, StoredPayload
from tenant_events.store.entity_state import ENTITY as _ENTITY
from tenant_events.store.entity_state import FROM as _FROM
from tenant_events.store.entity_state import FROM_KEYS as _FROM_KEYS
from tenant_events.store.entity_state import entity_from_row as _entity
from tenant_events.store.entity_state import entity_state
from tenant_events.store.reader import EventReader
from tenant_events.store.schema import small_reader
from tenant_events.values.events import StoredEvent

_Rows = list[tuple[object, ...]]
_Old = Callable[[sqlite3.Connection, SettledDirectory, _Rows], _Rows]


class DirectoryReader(HoldsConnection):
    """Queries over the entity directory and object timelines of one tenant database."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._held = HeldConnection(path, lambda: small_reader(path))
        self._owned = True
        self._archive: ArchiveReader | None = ArchiveReader(folder_of(path))
        self._with_settled = True

    @classmethod
    def over(cls, reader: EventReader) -> DirectoryReader:
        """Queries over an event reader's own connection and lock: no second connection to keep the write-ahead
        log alive; closing stays the reader's business."""
        directory = cls.__new__(cls)
        directory.path = reader.path
        directory._held, directory._owned = reader._held, False
        directory._archive = reader.archive
        directory._with_settled = True
        return directory

    @classmethod
    def on_connection(cls, conn: sqlite3.Connection, *, settled: bool = False) -> DirectoryReader:
        """Queries over a connection someone else owns and uses on one thread (the writer's, for the alert
        rules' wording): no second connection, no lock shared with anyone. `settled`: look in the directory's
        settled past too (the access review; not the writer's thread, which names recent events)."""
        directory = cls.__new__(cls)
        directory.path = Path(conn.execute("PRAGMA database_list").fetchone()[2])
        directory._held, directory._owned = HeldConnection.fixed(conn, directory.path), False
        directory._archive = None  # the alert rules' wording: recent events, the live table's
        directory._with_settled = settled
        return directory

    def close(self) -> None:
        if self._owned:
            self._held.close()
            if self._archive is not None:
                self._archive.close()

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

    def _settled(self) -> SettledDirectory:
        """The settled files, inside the caller's read transaction."""
        return directory_settled.listed(self._conn, self.path) if self._with_settled else NOTHING

    def _read(self, sql: str, params: tuple[object, ...], old: _Old) -> tuple[_Rows, _Rows]:
        """Live rows and, from the settled files, `old(conn, settled, live rows)`, in one read transaction (the
        live rows alone without the settled past: one statement, inside whatever transaction the connection's
        owner has open)."""
        with self._lock:
            if not self._with_settled:
                return self._conn.execute(sql, params).fetchall(), []
            self._conn.execute("BEGIN")
            try:
                rows = self._conn.execute(sql, params).fetchall()
                return rows, old(self._conn, self._settled(), rows)
            finally:
                self._conn.execute("COMMIT")

    def entity(self, kind: str, entity_id: str) -> Entity | None:
        return self.entities([(kind, entity_id)]).get((kind, entity_id))

    def entities(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], Entity]:
        """The known ones among `(kind, id)` keys, in one query a tier (a page of summary sentences): the settled
        past is read for those the live directory lacks or knows by id alone."""
        asked = sorted(set(keys))

        def old(conn: sqlite3.Connection, settled: SettledDirectory, rows: _Rows) -> _Rows:
            found = _combined(rows, [])
            bare = [k for k in asked if k not in found or found[k].label == k[1]]
            return directory_settled.entity_rows(conn, settled, bare) if bare else []

        sql = f"SELECT {_ENTITY} FROM {_FROM_KEYS}"  # noqa: S608 - constants only
        rows, settled = self._read(sql, (orjson.dumps(asked).decode(),), old)
        return _combined(rows, settled)

    def find(self, kind: str, text: str) -> list[Entity]:
        """Entities of `kind` whose id is `text`, else whose email (users) or name is `text` (any case)."""
        by_id = f"SELECT {_ENTITY} FROM {_FROM} WHERE e.kind = ? AND e.id = ?"  # noqa: S608
        rows, old = self._read(
            by_id, (kind, text), lambda c, s, _r: directory_settled.found_rows(c, s, kind, text, by_id=True)
        )
        if not rows and not old:
            rows, old = self._read(
                f"SELECT {_ENTITY} FROM {_FROM} WHERE e.kind = ? AND (e.email = ? COLLATE NOCASE"  # noqa: S608
                " OR e.name = ? COLLATE NOCASE OR e.display = ? COLLATE NOCASE)",
                (kind, text, text, text),
                lambda c, s, _r: directory_settled.found_rows(c, s, kind, text, by_id=False),
            )
        return sorted(_combined(rows, old).values(), key=lambda e: e.id)

    def find_former(self, kind: str, text: str) -> list[Entity]:
        """Entities of `kind` once called `text` (any case) and renamed since: the directory keeps only the
        current name, the stored events the earlier ones."""
        with self._lock:
            ids = timeline_query.ids_once_called(self._conn, kind, text)
        known = self.entities((kind, i) for i in ids)
        return [known.get((kind, i)) or Entity(kind, i) for i in ids]

    def by_email(self, email: str) -> list[Entity]:
        """Users with that email (any case); more than one when an address moved between accounts."""
        rows, old = self._read(
            f"SELECT {_ENTITY} FROM {_FROM} WHERE e.kind = 'user' AND e.email = ? COLLATE NOCASE",  # noqa: S608
            (email,),
            lambda c, s, _r: directory_settled.email_rows(c, s, email),
        )
        return sorted(_combined(rows, old).values(), key=lambda e: e.id)

    def state(
        self, kind: str, entity_id: str, relations: Collection[Relation] | None = None
    ) -> EntityState | None:
        """The entity and its links: every one that holds now, then the most recently ended (entity_state.py);
        with `relations`, only links of those."""
        with self._lock:
            self._conn.execute("BEGIN")  # one snapshot: the writer may move the watermark meanwhile
            try:
                row = self._conn.execute(
                    f"SELECT {_ENTITY} FROM {_FROM} WHERE e.kind = ? AND e.id = ?",  # noqa: S608
                    (kind, entity_id),
                ).fetchone()
                settled = self._settled()
                if row is None:  # known from the settled past only
                    row = next(
                        iter(directory_settled.entity_rows(self._conn, settled, [(kind, entity_id)])), None
                    )
                if row is None:
                    return None
                upto = int(
                    self._conn.execute("SELECT value FROM counters WHERE name = 'directory_upto'").fetchone()[
                        0
                    ]
                )
                return entity_state(self._conn, row, upto, relations, settled)
            finally:
                self._conn.execute("COMMIT")

    def event_data(self, seqs: Iterable[int]) -> dict[int, StoredPayload]:
        """The type, `data` and directory stamp of stored events by seq (one query a tier), to make a page's
        summary sentences."""
        asked = sorted(set(seqs))
        wanted = orjson.dumps(asked).decode()
        with self._lock:
            self._conn.execute("BEGIN")  # one snapshot of both tiers (reader.py)
            try:
                snap = (
                    archive_catalog.snapshot(self._conn)
                    if self._archive is None
                    else team_view.snapshot(self._conn, self._archive.folder)
                )
                rows = self._conn.execute(
                    "SELECT e.seq, e.type, e.raw, e.time_ms FROM json_each(?) AS j"
                    " CROSS JOIN events AS e ON e.seq = j.value",
                    (wanted,),
                ).fetchall()
            finally:
                self._conn.execute("COMMIT")
        archived = [s for s in asked if s <= snap.upto]
        if archived and self._archive is not None:
            rows += self._archive.raws(self._archive.use(snap), archived)
        out: dict[int, StoredPayload] = {}
        for seq, kind, raw, time_ms in rows:
            try:
                data = orjson.loads(raw)["event"]["data"]
            except (orjson.JSONDecodeError, KeyError, TypeError):
                continue
            if isinstance(data, dict):
                stamp = (int(time_ms) << STAMP_SHIFT) | (int(seq) & ((1 << STAMP_SHIFT) - 1))
                out[int(seq)] = StoredPayload(str(kind), data, stamp)
        return out

    def every_name(self) -> dict[tuple[str, str], tuple[list[int], list[str | None]]]:
        """Every entity's names by seq, from both tiers (timeline_query.py): names at the time for a whole export."""
        with self._lock:
            return timeline_query.every_name(self._conn, self._archive)

    def objects_of(
        self, kind: str, entity_id: str, before: int | None = None
    ) -> list[tuple[int, dict[str, Any]]]:
        """(seq, object) of each created/updated event of the entity, oldest first, from both tiers (only those
        stored before seq `before`, when given; timeline_query.py)."""
        with self._lock:
            return timeline_query.objects_of(self._conn, kind, entity_id, self._archive, before=before)

    def objects_of_many(
        self, keys: Iterable[tuple[str, str]], floors: Mapping[tuple[str, str], int] | None = None
    ) -> dict[tuple[str, str], list[tuple[int, dict[str, Any]]]]:
        """`objects_of` of many entities at once, from both tiers: one archive read for them all."""
        with self._lock:
            return timeline_query.objects_of_many(self._conn, keys, self._archive, floors=floors)

    def timeline(
        self, kind: str, entity_id: str, before_seq: int | None = None, limit: int = 100
    ) -> list[StoredEvent]:
        """Up to `limit` stored events that name the entity, stored before `before_seq` (None: the newest),
        newest first, each with its raw JSON, from both tiers."""
        with self._lock:
            return timeline_query.page(self._conn, kind, entity_id, before_seq, limit, self._archive)


def _combined(
    live: list[tuple[object, ...]], settled: list[tuple[object, ...]]
) -> dict[tuple[str, str], Entity]:
    """Entities by key from live and settled rows; a key in both (named again after it was settled) merged."""
    out: dict[tuple[str, str], Entity] = {}
    for row in [*settled, *live]:
        key, one = (str(row[0]), str(row[1])), _entity(row)
        out[key] = directory_settled.merged(one, out[key]) if key in out else one
    return out


def open_directory(path: Path) -> DirectoryReader:
    """A directory reader over `path`; the database must exist and be at the current schema (a writer opened it)."""
    if not path.exists():
        raise FileNotFoundError(path)
    try:
        return DirectoryReader(path)
    except sqlite3.OperationalError as exc:
        from tenant_events.errors import StorageError

        raise StorageError(f"cannot read the event database {path}: {exc}") from exc
