"""Reads the archive tier for `EventReader` (reader.py): the same questions, over the files of one snapshot.

Every call takes the `ArchiveSnapshot` the caller read in the same SQLite transaction as its live rows, so both
tiers answer for one moment (archive_catalog.py). Newest-first pages walk the files from the newest seq down,
a few at a time (most screens come from the newest file); counts, per-type counts and the histogram read every
file at once. A file deleted under an old snapshot (compaction, retention) surfaces as `ArchiveMoved`: the
caller takes a new snapshot and asks again.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, Final

from tenant_events.store import duck
from tenant_events.store.archive_catalog import ArchiveFile, ArchiveSnapshot
from tenant_events.store.archive_layout import canonical_time
from tenant_events.store.archive_source import ArchiveSource
from tenant_events.store.archive_sql import Compiled, FilterCompiler, counts_query, phrase_tokens
from tenant_events.store.live_walk import NO_LOW
from tenant_events.values.events import EventFilter, StoredEvent

_SHOWN: Final = (
    "seq, event_id, stream_offset, type, time_ms, time, source, tenant, purpose, summary, received_at"
)
FAMILIES: Final = ("user", "organization", "group")
FEW_CANDIDATES: Final = 256  # a filter's candidate rows up to this many are named in its statement (_in_cand)


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


class ArchiveReader(ArchiveSource):
    """The archive's half of one `EventReader`; its own DuckDB cursor, opened on first use."""

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

    def count(
        self,
        snap: ArchiveSnapshot,
        f: EventFilter,
        alerts: Mapping[int, tuple[int, ...]],
        low: int | None = None,
        high: int | None = None,
    ) -> int:
        files = snap.covering(NO_LOW if low is None else low, high if high is not None else snap.upto)
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
        files = snap.covering(NO_LOW, high)
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
        while True:
            files = snap.covering(NO_LOW, high - 1)
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
