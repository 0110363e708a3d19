"""Reads the archive tier for `EventReader` (reader.py): the same questions, over the files of one snapshot.

Every call takes the `ArchiveSnapshot` the caller read in the same SQLite transaction as its live rows, so both
tiers answer for one moment (archive_catalog.py). Newest-first pages walk the files from the newest seq down,
a few at a time (most screens come from the newest file); counts, per-type counts and the histogram read every
file at once. A file deleted under an old snapshot (compaction, retention) surfaces as `ArchiveMoved`: the
caller takes a new snapshot and asks again.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from tenant_events.store import duck
from tenant_events.store.archive_catalog import ArchiveFile, ArchiveSnapshot, Lake
from tenant_events.store.archive_lake import LAKE_PREFIX, attach, ranges
from tenant_events.store.archive_layout import canonical_time, tokens_name
from tenant_events.store.archive_sql import Compiled, FilterCompiler, counts_query, phrase_tokens
from tenant_events.values.events import EventFilter, StoredEvent

if TYPE_CHECKING:
    import duckdb

_SHOWN: Final = (
    "seq, event_id, stream_offset, type, time_ms, time, source, tenant, purpose, summary, received_at"
)
FAMILIES: Final = ("user", "organization", "group")
FEW_CANDIDATES: Final = 256  # a filter's candidate rows up to this many are named in its statement (_in_cand)


class ArchiveMoved(Exception):
    """A file of the snapshot is gone (merged or expired since): read again with a new snapshot."""


def event_of(row: Sequence[Any], raw: str | None = None) -> StoredEvent:
    """A StoredEvent from a `_SHOWN` row."""
    seq, event_id, offset, kind, time_ms, time_text, source, tenant, purpose, summary, received = row[:11]
    return StoredEvent(
        seq,
        event_id,
        offset,
        kind,
        kind.split(".", 1)[0],
        time_text if time_text is not None else canonical_time(time_ms),
        source,
        tenant,
        purpose,
        summary,
        received,
        raw,
    )


def _in_cand(where: str, few: Sequence[int] | None) -> str:
    """Only the candidates' rows: a few named in the statement, which DuckDB takes into its scan of the files
    (row groups holding none are not read: an e-mail's or an event id's match 1.8 s -> 0.05 s on 1M events);
    more by a CASE, which keeps the exact checks off every other row."""
    if few is not None:
        return f"seq IN ({', '.join(str(int(s)) for s in few)}) AND ({where})" if few else "false"
    return f"CASE WHEN seq IN (SELECT seq FROM cand) THEN {where} ELSE false END"  # noqa: S608 - a table made here


def _gone(exc: Exception) -> bool:
    """Whether DuckDB failed for a file of the snapshot that is gone."""
    return "No files found" in str(exc) or "No such file" in str(exc)


def _list(paths: Sequence[str]) -> str:
    return "[" + ", ".join(duck.literal(p) for p in paths) + "]"


class ArchiveReader:
    """The archive's half of one `EventReader`; its own DuckDB cursor, opened on first use."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        if folder.is_dir():
            # DuckDB now, where the reader is made (the app: before its window shows): its import holds every
            # Python thread for ~0.2 s, which froze a window whose first count imported it on a worker
            duck.engine()
        self._cursor: duckdb.DuckDBPyConnection | None = None
        self._lock = threading.Lock()
        self._lake: Lake | None = None

    def close(self) -> None:
        with self._lock:
            if self._cursor is not None:
                self._cursor.close()
                self._cursor = None

    def _relations(self, files: Sequence[ArchiveFile], tokens: bool) -> str:
        """`ev` (and `tok`) over `files`: Parquet files in the folder and entries of the team's lake."""
        local = [f for f in files if not f.name.startswith(LAKE_PREFIX)]
        shared = [f for f in files if f.name.startswith(LAKE_PREFIX)]
        ev_parts, tok_parts = [], []
        if local:
            ev_parts.append(
                f"SELECT * FROM read_parquet({_list([str(self.folder / f.name) for f in local])})"  # noqa: S608
            )
            tok_parts.append(
                f"SELECT * FROM read_parquet({_list([str(self.folder / tokens_name(f.name)) for f in local])})"  # noqa: S608
            )
        if shared:
            if self._lake is None:
                raise ArchiveMoved("the catalog names a team archive this reader was not given")
            alias = attach(self._lake, read_only=True)
            ev_parts.append(f"SELECT * FROM {alias}.events WHERE {ranges(shared)}")  # noqa: S608
            tok_parts.append(f"SELECT * FROM {alias}.tokens")  # noqa: S608 - its seqs are met with ev's
        sql = f"WITH ev AS ({' UNION ALL '.join(ev_parts)})"
        if tokens:
            sql += f", tok AS ({' UNION ALL '.join(tok_parts)})"
        return sql

    def use(self, snap: ArchiveSnapshot) -> ArchiveSnapshot:
        """Take note of the snapshot's lake (the reader's calls pass it on)."""
        if snap.lake is not None:
            self._lake = snap.lake
        return snap

    def _open(self) -> duckdb.DuckDBPyConnection:
        """The cursor (hold the lock)."""
        if self._cursor is None:
            self._cursor = duck.cursor()
        return self._cursor

    def _run(self, sql: str) -> list[Any]:
        with self._lock:
            return self._execute(self._open(), sql)

    @staticmethod
    def _execute(cursor: duckdb.DuckDBPyConnection, sql: str, params: Sequence[object] = ()) -> list[Any]:
        import duckdb

        try:
            return cursor.execute(sql, list(params)).fetchall()
        except duckdb.IOException as exc:
            if _gone(exc):
                raise ArchiveMoved(str(exc)) from exc
            raise

    def chunks(
        self, files: Sequence[ArchiveFile], select: str, where: str, rest: str, size: int
    ) -> Iterator[list[Any]]:
        """`SELECT {select} FROM ev WHERE {where} {rest}` over `files`, `size` rows at a time: more rows than are
        held at once (a rule's history, event_history.py)."""
        import duckdb

        with self._lock:
            cursor = self._open()
            try:
                cursor.execute(self._select(files, select, where, rest))
                while rows := cursor.fetchmany(size):
                    yield rows
            except duckdb.IOException as exc:
                if _gone(exc):
                    raise ArchiveMoved(str(exc)) from exc
                raise

    def _query(
        self,
        files: Sequence[ArchiveFile],
        f: EventFilter,
        alerts: Mapping[int, tuple[int, ...]],
        low: int | None,
        high: int | None,
        select: str,
        rest: str = "",
        extra: str | None = None,
    ) -> list[Any]:
        """`SELECT {select} FROM ev WHERE <f> {rest}` over `files`. Token lookups first, each into a temporary
        table of this cursor, then the seqs every match lies in (`cand`); the exact checks run only on rows in
        it (a CASE keeps DuckDB from running a regular expression over every row of a file). Separate small
        statements: one query holding every lookup as a subquery spent seconds in DuckDB's planner."""
        compiled = self._compile(files, f, alerts, low, high)
        if extra is not None:
            compiled = replace(compiled, where=f"{extra} AND {compiled.where}")
        if compiled.lookup is None:
            return self._run(self._select(files, select, compiled.where, rest))
        with self._lock:
            cursor = self._open()
            try:
                tokens = self._relations(files, True)
                cursor.execute(f"CREATE OR REPLACE TEMP TABLE sets AS {tokens} {compiled.lookup}")
                where = compiled.where
                if compiled.drive is not None:
                    cursor.execute(f"CREATE OR REPLACE TEMP TABLE cand AS {compiled.drive}")
                    few = self._execute(cursor, "SELECT seq FROM cand LIMIT ?", [FEW_CANDIDATES + 1])
                    seqs = [int(r[0]) for r in few] if len(few) <= FEW_CANDIDATES else None
                    where = _in_cand(where, seqs)
                return self._execute(cursor, self._select(files, select, where, rest))
            finally:
                cursor.execute("DROP TABLE IF EXISTS sets; DROP TABLE IF EXISTS cand")

    def _compile(
        self,
        files: Sequence[ArchiveFile],
        f: EventFilter,
        alerts: Mapping[int, tuple[int, ...]],
        low: int | None,
        high: int | None,
    ) -> Compiled:
        """The filter's SQL, its phrases driven by their rarest tokens in these files."""
        first = FilterCompiler(alerts)
        compiled = first.compile(f, low, high)
        if not first.wanted:
            return compiled
        keys, query = counts_query(first.wanted)
        found = self._run(f"{self._relations(files, True)} {query}")[0]
        return FilterCompiler(alerts, {k: int(n or 0) for k, n in zip(keys, found, strict=True)}).compile(
            f, low, high
        )

    def _select(self, files: Sequence[ArchiveFile], select: str, where: str, rest: str) -> str:
        return f"{self._relations(files, False)} SELECT {select} FROM ev WHERE {where} {rest}"  # noqa: S608

    def count(
        self,
        snap: ArchiveSnapshot,
        f: EventFilter,
        alerts: Mapping[int, tuple[int, ...]],
        low: int | None = None,
        high: int | None = None,
    ) -> int:
        files = snap.covering(low or 0, high if high is not None else snap.upto)
        if not files:
            return 0
        return int(self._query(files, f, alerts, low, high, "count(*)")[0][0])

    def counts_by_type(
        self, snap: ArchiveSnapshot, f: EventFilter, alerts: Mapping[int, tuple[int, ...]]
    ) -> dict[str, int]:
        if not snap.files:
            return {}
        rows = self._query(snap.files, f, alerts, None, None, "type, count(*)", "GROUP BY type")
        return {str(t): int(n) for t, n in rows}

    def time_span(
        self, snap: ArchiveSnapshot, f: EventFilter, alerts: Mapping[int, tuple[int, ...]]
    ) -> tuple[int, int] | None:
        """The earliest and latest time (ms) of the matching archived events, None when none match."""
        if not snap.files:
            return None
        low, high = self._query(snap.files, f, alerts, None, None, "min(time_ms), max(time_ms)")[0]
        return None if low is None else (int(low), int(high))

    def histogram(
        self, snap: ArchiveSnapshot, f: EventFilter, alerts: Mapping[int, tuple[int, ...]], size_ms: int
    ) -> list[tuple[int, str, int]]:
        """(bucket start in ms, family, count) rows."""
        if not snap.files:
            return []
        size = int(size_ms)
        select = f"(time_ms // {size}) * {size}, split_part(type, '.', 1), count(*)"
        rows = self._query(snap.files, f, alerts, None, None, select, "GROUP BY 1, 2")
        return [(int(b), str(fam), int(n)) for b, fam, n in rows]

    def walk(
        self,
        snap: ArchiveSnapshot,
        f: EventFilter,
        alerts: Mapping[int, tuple[int, ...]],
        low: int,
        high: int,
        limit: int,
        newest_first: bool,
        offset: int = 0,
        raw: bool = False,
    ) -> list[StoredEvent]:
        """Up to `limit` matching events with low < seq < high after skipping `offset`, in seq order either way.
        Files are read a growing batch at a time from the end the walk starts at, until no file left could hold
        a row that belongs on the page (files overlap in seq: one per month of a move)."""
        if limit <= 0:
            return []
        files = sorted(
            snap.covering(low + 1, high - 1),
            key=lambda a: a.last_seq if newest_first else -a.first_seq,
            reverse=True,
        )
        needed = limit + offset
        columns = _SHOWN + (", raw" if raw else "")
        order = "DESC" if newest_first else "ASC"
        found: list[Any] = []
        at, batch = 0, 1
        while at < len(files):
            group = files[at : at + batch]
            at, batch = at + batch, batch * 2
            found += self._query(
                group, f, alerts, low + 1, high - 1, columns, f"ORDER BY seq {order} LIMIT {needed}"
            )
            found.sort(key=lambda r: int(r[0]), reverse=newest_first)
            del found[needed:]
            if len(found) == needed and at < len(files):
                edge = int(found[-1][0])
                nearest = files[at].last_seq if newest_first else files[at].first_seq
                if (nearest < edge) if newest_first else (nearest > edge):
                    break
        return [event_of(r, r[11] if raw else None) for r in found[offset:]]

    def anchors(
        self,
        snap: ArchiveSnapshot,
        f: EventFilter,
        alerts: Mapping[int, tuple[int, ...]],
        high: int,
        every: int,
        first_row: int,
    ) -> list[int]:
        """The seq of every matching row whose number (counting `first_row` for the newest archived match) is a
        multiple of `every`."""
        files = snap.covering(0, high)
        if not files:
            return []
        # numbered in DuckDB: a million matching seqs brought into Python held every other thread for ~1 s
        number = "row_number() OVER (ORDER BY seq DESC) - 1"
        rest = f"QUALIFY ({int(first_row)} + {number}) % {int(every)} = 0 ORDER BY seq DESC"
        return [int(r[0]) for r in self._query(files, f, alerts, None, high, "seq", rest)]

    def by_time(
        self,
        snap: ArchiveSnapshot,
        f: EventFilter,
        alerts: Mapping[int, tuple[int, ...]],
        position: tuple[int, int] | None,
        limit: int,
        newest_first: bool,
    ) -> list[tuple[int, StoredEvent]]:
        """Up to `limit` (time_ms, event) past `position` — (time_ms, seq), exclusive — in event-time order
        (the all-tenants view, time_pager.py)."""
        if not snap.files or limit <= 0:
            return []
        order, past = ("DESC", "<") if newest_first else ("ASC", ">")
        compiled_rest = f"ORDER BY time_ms {order}, seq {order} LIMIT {int(limit)}"
        if position is None:
            rows = self._query(snap.files, f, alerts, None, None, _SHOWN, compiled_rest)
        else:
            at, seq = int(position[0]), int(position[1])
            rows = self._query(
                snap.files,
                f,
                alerts,
                None,
                None,
                _SHOWN,
                compiled_rest,
                extra=f"(time_ms {past} {at} OR (time_ms = {at} AND seq {past} {seq}))",
            )
        return [(int(r[4]), event_of(r)) for r in rows]

    def naming(
        self, snap: ArchiveSnapshot, token: str | None, needle: str, high: int, chunk: int
    ) -> Iterator[StoredEvent]:
        """Events below `high` whose text holds `token` (any column: a superset of the raw JSON's), newest first,
        with raw JSON, a chunk at a time; without a token, those whose raw JSON contains `needle`."""
        folded = phrase_tokens(token) if token is not None else ()
        token = folded[0] if len(folded) == 1 else token  # as FTS5 stores it: lower case, accents off
        while high > 1:
            files = snap.covering(0, high - 1)
            if not files:
                return
            if token is None:
                where = f"seq < {int(high)} AND contains(raw, {duck.literal(needle)})"
                rows = self._run(
                    self._select(files, f"{_SHOWN}, raw", where, f"ORDER BY seq DESC LIMIT {int(chunk)}")
                )
            else:
                tokens = self._relations(files, True)
                lookup = f"{tokens} SELECT unnest(seqs) AS seq FROM tok WHERE term = {duck.literal(token)}"  # noqa: S608
                where = f"seq < {int(high)} AND seq IN (SELECT seq FROM hits WHERE seq < {int(high)})"  # noqa: S608
                with self._lock:
                    cursor = self._open()
                    try:
                        cursor.execute(f"CREATE OR REPLACE TEMP TABLE hits AS {lookup}")
                        rows = self._execute(
                            cursor,
                            self._select(
                                files, f"{_SHOWN}, raw", where, f"ORDER BY seq DESC LIMIT {int(chunk)}"
                            ),
                        )
                    finally:
                        cursor.execute("DROP TABLE IF EXISTS hits")
            yield from (event_of(r, r[11]) for r in rows)
            if len(rows) < chunk:
                return
            high = int(rows[-1][0])

    def raws(self, snap: ArchiveSnapshot, seqs: Sequence[int]) -> list[tuple[int, str, str, int]]:
        """(seq, type, raw JSON, time_ms) of archived events by seq (a page's summary sentences,
        entity_reader.py)."""
        files = snap.covering(min(seqs), max(seqs)) if seqs else ()
        if not files:
            return []
        where = f"seq IN ({', '.join(str(int(s)) for s in seqs)})"
        return [
            (int(a), str(b), str(c), int(d))
            for a, b, c, d in self._run(self._select(files, "seq, type, raw, time_ms", where, ""))
        ]

    def raws_between(
        self, snap: ArchiveSnapshot, first: int, last: int, types: Sequence[str]
    ) -> list[tuple[int, int, str, str]]:
        """(seq, time_ms, type, raw JSON) of archived events of `types` with seq in [first, last], by seq (the
        access history built from events moved before it took them in, access_events.py)."""
        files = snap.covering(first, last)
        if not files or not types:
            return []
        kinds = ", ".join(duck.literal(t) for t in types)
        return [
            (int(a), int(b), str(c), str(d))
            for a, b, c, d in self._run(
                self._select(
                    files,
                    "seq, time_ms, type, raw",
                    f"seq BETWEEN {int(first)} AND {int(last)} AND type IN ({kinds})",
                    "ORDER BY seq",
                )
            )
        ]

    def time_after(self, snap: ArchiveSnapshot, seq: int) -> int | None:
        """The time of the first archived event stored after `seq` (where a possible gap ends)."""
        files = snap.covering(seq + 1, snap.upto)
        if not files:
            return None
        rows = self._run(self._select(files, "time_ms", f"seq > {int(seq)}", "ORDER BY seq LIMIT 1"))
        return int(rows[0][0]) if rows else None

    def get(self, snap: ArchiveSnapshot, seq: int) -> StoredEvent | None:
        files = snap.covering(seq, seq)
        if not files:
            return None
        rows = self._run(
            f"{self._relations(files, False)} SELECT {_SHOWN}, raw FROM ev WHERE seq = {int(seq)}"  # noqa: S608
        )
        return event_of(rows[0], rows[0][11]) if rows else None

    def find(self, snap: ArchiveSnapshot, event_id: str) -> StoredEvent | None:
        if not snap.files:
            return None
        with self._lock:
            rows = self._execute(
                self._open(),
                f"{self._relations(snap.files, False)} SELECT {_SHOWN}, raw FROM ev WHERE event_id = ? LIMIT 1",  # noqa: S608
                [event_id],
            )
        return event_of(rows[0], rows[0][11]) if rows else None

    def range_raw(self, snap: ArchiveSnapshot, first: int, last: int) -> list[tuple[StoredEvent, str]]:
        files = snap.covering(first, last)
        if not files:
            return []
        rows = self._run(
            f"{self._relations(files, False)} SELECT {_SHOWN}, raw FROM ev"  # noqa: S608
            f" WHERE seq BETWEEN {int(first)} AND {int(last)} ORDER BY seq"
        )
        return [(event_of(r), str(r[11])) for r in rows]
