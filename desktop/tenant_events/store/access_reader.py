"""Read API over one tenant's access history (access_history.py): which links held at a moment (each span with the
events that began and ended it), the events behind them, entities' names, and how far the history reaches.

Its own read-only connection, calls serialised by a lock (like entity_reader.py). Each answer is read in one
read transaction, so the history's reach and its spans agree. A moment is one short range query per reach on the
spans' (reach, since) index (access_history.py): about twice the rows of the spans that hold are read, however
long the history. A moment before the settled point also reads the spans that ended before it from the archive
folder (access_settled.py).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, Final, TypeVar

import orjson

from tenant_events.store import access_settled, timeline_query
from tenant_events.store.access_events import events_by_seq, newest_ms, time_after, time_of
from tenant_events.store.access_facts import END_KINDS, HOLDS, OPEN_REACH
from tenant_events.store.access_records import (
    EventFacts,
    GapWindow,
    HeldAt,
    HistoryReach,
    LinkSpan,
)
from tenant_events.store.access_settled import Settled, listed
from tenant_events.store.archive_layout import folder_of
from tenant_events.store.archive_reader import ArchiveReader
from tenant_events.store.directory import Rel
from tenant_events.store.entity_reader import DirectoryReader
from tenant_events.store.entity_records import Entity, Relation
from tenant_events.store.health import database_errors
from tenant_events.store.schema import connect

T = TypeVar("T")
_SPAN: Final = "rel, a, b, c, since, until, since_seq, until_seq"
# Per reach, the spans holding at a moment: they began within 2^(reach + 1) stamps before it (access_history.py).
_HELD_AT: Final = (
    f"SELECT {_SPAN} FROM access_spans INDEXED BY access_spans_reach"  # noqa: S608 - constants
    " WHERE reach = ? AND since > ? AND since <= ? AND until > ?"
)
_RELATION: Final = {int(r): Relation[r.name] for r in Rel}


class AccessReader:
    """Queries over the access history of one tenant database (access/source.py `HistorySource`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn = connect(path, readonly=True)
        self._conn.execute(
            "PRAGMA cache_size = -4000"
        )  # as the directory's reader: a few MiB, not the writer's 32
        self._lock = threading.Lock()
        self._names = DirectoryReader.on_connection(self._conn, settled=True)  # the deleted too
        self._archive = ArchiveReader(folder_of(path))  # events that did a change may since have moved

    def close(self) -> None:
        with self._lock:
            self._conn.close()
            self._archive.close()

    def __enter__(self) -> AccessReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _read(self, work: Callable[[], T]) -> T:
        """`work()` in one read transaction, under the lock; SQLite failing is one StorageError (health.py)."""
        with self._lock, database_errors(self.path):
            self._conn.execute("BEGIN")
            try:
                return work()
            finally:
                self._conn.execute("COMMIT")

    def held_at(self, moment: int) -> HeldAt:
        """The links that held at stamp `moment` (every event stamped up to it counted)."""

        def work() -> tuple[list[Any], Settled, HistoryReach]:
            rows = []
            for level in (*range(OPEN_REACH - 1), OPEN_REACH):
                low = -1 if level == OPEN_REACH else moment - (2 << level)
                rows += self._conn.execute(_HELD_AT, (level, low, moment, moment)).fetchall()
            return rows, listed(self._conn, self.path), self._reach()

        rows, settled, reach = self._read(work)
        # what ended before the settled point is in the archive folder (listed in the same snapshot as the rows)
        rows += access_settled.held_at(settled, moment)
        return HeldAt(moment, tuple(map(_span, rows)), reach)

    def events(self, seqs: Iterable[int]) -> dict[int, EventFacts]:
        """The stored events by seq (those still stored, in either tier), with their `data`."""
        rows = self._read(lambda: events_by_seq(self._conn, self._archive, list(seqs)))
        out = {}
        for seq, time_ms, kind, raw in rows:
            try:
                event = orjson.loads(raw)["event"]
            except (orjson.JSONDecodeError, KeyError, TypeError):
                continue
            if not isinstance(event, dict):
                continue
            out[int(seq)] = EventFacts(
                int(seq), str(event.get("id", "")), str(kind), int(time_ms), _dict(event.get("data"))
            )
        return out

    def entities(self, keys: Iterable[tuple[str, str]]) -> Mapping[tuple[str, str], Entity]:
        """The directory's entities among `(kind, id)` keys: names as the event table shows them."""
        with self._lock, database_errors(self.path):
            return self._names.entities(keys)

    def objects_of(self, kind: str, entity_id: str) -> list[tuple[int, dict[str, Any]]]:
        """(seq, object) of each created/updated event of the entity, oldest first: names at any time."""
        with self._lock, database_errors(self.path):
            return timeline_query.objects_of(self._conn, kind, entity_id, self._archive)

    def objects_of_many(
        self, keys: Iterable[tuple[str, str]], floors: Mapping[tuple[str, str], int] | None = None
    ) -> dict[tuple[str, str], list[tuple[int, dict[str, Any]]]]:
        """`objects_of` of many entities at once: one archive read for them all (a diff names thousands)."""
        with self._lock, database_errors(self.path):
            return timeline_query.objects_of_many(self._conn, keys, self._archive, floors=floors)

    def _reach(self) -> HistoryReach:
        counters = dict(
            self._conn.execute(
                "SELECT name, value FROM counters WHERE name IN ('access_upto', 'access_from_ms')"
            ).fetchall()
        )
        upto = int(counters.get("access_upto", 0))
        stored = self._conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'events'").fetchone()
        newest = newest_ms(self._conn, upto)
        first = counters.get("access_from_ms")
        return HistoryReach(
            int(first) if first is not None else None,
            newest,
            upto,
            int(stored[0]) if stored else 0,
            tuple(self._gaps()),
        )

    def _gaps(self) -> list[GapWindow]:
        """Each possible gap's window: from where the stream resumed (else the event stored before it) to the
        first event stored after it."""
        out = []
        for reason, noted, resumed, after_seq in self._conn.execute(
            "SELECT reason, created_at, resumed_from, after_seq FROM gaps ORDER BY id"
        ).fetchall():
            before = time_of(self._conn, self._archive, after_seq or 0)
            after = time_after(self._conn, self._archive, after_seq or 0)
            start = _iso_ms(resumed)
            if start is None:
                start = before if before is not None else int(noted * 1000)
            out.append(GapWindow(str(reason), start, after, float(noted)))
        return out


def _iso_ms(text: object) -> int | None:
    if not isinstance(text, str):
        return None
    try:
        return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def _dict(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


def _span(row: tuple[int, str, str, str, int, int, int, int | None]) -> LinkSpan:
    rel, a, b, c, since, until, since_seq, until_seq = row
    ids = (a, b, c)[: len(END_KINDS[rel])]
    return LinkSpan(
        _RELATION[rel],
        ids,
        since,
        since_seq,
        None if until == HOLDS else until,
        None if until == HOLDS else until_seq,
    )


def open_access(path: Path) -> AccessReader:
    """An access reader over `path`; the database must exist at the current schema."""
    if not path.exists():
        raise FileNotFoundError(path)
    try:
        return AccessReader(path)
    except sqlite3.OperationalError as exc:
        from tenant_events.errors import StorageError

        raise StorageError(f"cannot read the event database {path}: {exc}") from exc
