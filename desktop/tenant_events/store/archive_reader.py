"""Reads the archive tier for `EventReader` (reader.py): the same questions, over the files of one snapshot.

Every call takes the `ArchiveSnapshot` the caller read in the same SQLite transaction as its live rows, so both
tiers answer for one moment (archive_catalog.py). Newest-first pages walk the files from the newest seq down,
a few at a time (most screens come from the newest file); counts, per-type counts and the histogram read every
file at once. A file deleted under an old snapshot (compaction, retention) surfaces as `ArchiveMoved`: the
caller takes a new snapshot and asks again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from tenant_events.store.archive_catalog import ArchiveFile, ArchiveSnapshot
from tenant_events.store.archive_fetch import SHOWN, ArchiveFetch, event_of
from tenant_events.store.archive_matches import MOST_KEPT, Matches, key_of
from tenant_events.store.archive_sql import Compiled, FilterCompiler, counts_query
from tenant_events.store.live_walk import NO_LOW
from tenant_events.values.events import EventFilter, StoredEvent

if TYPE_CHECKING:
    import duckdb

FAMILIES: Final = ("user", "organization", "group")
FEW_CANDIDATES: Final = 256  # a filter's candidate rows up to this many are named in its statement (_in_cand)
WIDE_SHARE: Final = 5  # candidates of a field's value past 1/5 of the rows are not met first (_prepare)
FEW_LOOKED_UP: Final = 50_000  # a page's token lookups over every file at once when they list this many seqs


def _in_cand(where: str, few: Sequence[int] | None) -> str:
    """Only the candidates' rows: a few named in the statement, which DuckDB takes into its scan of the files
    (row groups holding none are not read: an e-mail's or an event id's match 1.8 s -> 0.05 s on 1M events);
    more by a CASE, which keeps the exact checks off every other row."""
    if few is not None:
        return f"seq IN ({', '.join(str(int(s)) for s in few)}) AND ({where})" if few else "false"
    return f"CASE WHEN seq IN (SELECT seq FROM cand) THEN {where} ELSE false END"  # noqa: S608 - a table made here


class ArchiveReader(ArchiveFetch):
    """The archive's half of one `EventReader`; its own DuckDB cursor, opened on first use."""

    def __init__(self, folder: Path) -> None:
        super().__init__(folder)
        self._matches = Matches()

    def close(self) -> None:
        with self._lock:
            self._matches.forget()
        super().close()

    def _prepare(
        self,
        cursor: duckdb.DuckDBPyConnection,
        files: Sequence[ArchiveFile],
        f: EventFilter,
        alerts: Mapping[int, tuple[int, ...]],
        low: int | None,
        high: int | None,
        compiled: Compiled | None = None,
        settle: bool = True,
    ) -> tuple[str, list[int] | None, bool]:
        """The exact condition of `f` on a row of `files` (hold the lock), its candidates when there are at most
        FEW_CANDIDATES, and whether it has candidates at all (the table `cand`). Token lookups first, each into
        a temporary table of this cursor, then the seqs every match lies in (`cand`); the exact checks run only
        on rows in it (a CASE keeps DuckDB from running a regular expression over every row of a file).
        Separate small statements: one query holding every lookup as a subquery spent seconds in DuckDB's
        planner. `settle`: many candidates of a phrase are settled first (`_settle`), for a scan of every file; a
        page, which stops at its first rows, does not. A filter of field values whose tokens most rows hold is
        checked on every row instead (`_wide`). `_drop` the tables after."""
        compiled = self._compile(cursor, files, f, alerts, low, high) if compiled is None else compiled
        if compiled.lookup is None:
            return compiled.exact(), None, False
        if self._wide(files, compiled):
            self._execute(
                cursor, "CREATE OR REPLACE TEMP TABLE cand (seq BIGINT)"
            )  # none to meet: not `driven`
            return compiled.exact(), None, True
        tokens = self._relations(files, True)
        self._execute(cursor, f"CREATE OR REPLACE TEMP TABLE sets AS {tokens} {compiled.lookup}")
        if compiled.drive is None:
            return compiled.exact(), None, False
        self._execute(cursor, f"CREATE OR REPLACE TEMP TABLE cand AS {compiled.drive}")
        few = self._execute(cursor, "SELECT seq FROM cand LIMIT ?", [FEW_CANDIDATES + 1])
        if len(few) > FEW_CANDIDATES and settle and compiled.orders and self._settle(cursor, files, compiled):
            few = self._execute(cursor, "SELECT seq FROM cand LIMIT ?", [FEW_CANDIDATES + 1])
            if len(few) <= FEW_CANDIDATES:
                return _in_cand(compiled.where, [int(r[0]) for r in few]), [int(r[0]) for r in few], True
            return _in_cand(compiled.where, None), None, True
        if len(few) > FEW_CANDIDATES:
            return _in_cand(compiled.exact(), None), None, True
        seqs = self._in_order(cursor, files, [int(r[0]) for r in few], compiled.orders)
        if len(seqs) > 1:
            seqs = self._passing(cursor, files, compiled.where, seqs)
        return _in_cand(compiled.where, seqs), seqs, True

    def _passing(
        self, cursor: duckdb.DuckDBPyConnection, files: Sequence[ArchiveFile], where: str, seqs: list[int]
    ) -> list[int]:
        """The few candidates that pass `where`, checked on its own columns: the shown columns (the event id and
        summary, a row group's worth each, ~10 ms) are then read only in the row groups holding a match, not
        in every one holding a candidate (an e-mail's 19 candidates over the year, 3 of them matches)."""
        rows = self._execute(cursor, self._select(files, "seq", _in_cand(where, seqs), "ORDER BY seq"))
        return [int(r[0]) for r in rows]

    @staticmethod
    def _wide(files: Sequence[ArchiveFile], compiled: Compiled) -> bool:
        """Whether `compiled` is a filter of field values (its `where` whole, no token set in it) whose tokens'
        events make more than 1/WIDE_SHARE of the rows of `files`: its values are then checked on every row,
        with no lookup (`ip:203.0.113.7`: every event with an address holds its tokens; looking them up and
        meeting each row with them cost 2-3x a plain scan of the values' column)."""
        if not compiled.whole or compiled.listed is None or "FROM sets" in compiled.where:
            return False
        return compiled.listed * WIDE_SHARE > sum(a.rows for a in files)

    def _settle(
        self, cursor: duckdb.DuckDBPyConnection, files: Sequence[ArchiveFile], compiled: Compiled
    ) -> bool:
        """Many candidates: keep in `cand` those that pass the filter with their phrases in order, when the event
        id and summary leave at most FEW_CANDIDATES of them to check on the raw JSON (its column, 85% of an
        event, then read only in the row groups holding one); False, `cand` as it was, otherwise."""
        small = " AND ".join(f"coalesce({a}, false)" for a, _b in compiled.orders)
        checked = self._select(files, f"seq, {small} AS ok", _in_cand(compiled.where, None), "")
        try:
            self._execute(cursor, f"CREATE OR REPLACE TEMP TABLE checked AS {checked}")
            rest = self._execute(cursor, "SELECT seq FROM checked WHERE NOT ok LIMIT ?", [FEW_CANDIDATES + 1])
            if len(rest) > FEW_CANDIDATES:
                return False
            passing = self._in_order(cursor, files, [int(r[0]) for r in rest], compiled.orders)
            also = f" UNION ALL SELECT unnest([{', '.join(map(str, passing))}])" if passing else ""
            kept = f"SELECT seq FROM checked WHERE ok{also}"  # noqa: S608 - numbers made here
            self._execute(cursor, f"CREATE OR REPLACE TEMP TABLE cand AS {kept}")
            return True
        finally:
            cursor.execute("DROP TABLE IF EXISTS checked")

    def _in_order(
        self,
        cursor: duckdb.DuckDBPyConnection,
        files: Sequence[ArchiveFile],
        seqs: list[int],
        orders: Sequence[tuple[str, str]],
    ) -> list[int]:
        """The few candidates whose phrases stand in order: each checked on the event id and summary first,
        and on the raw JSON (a row group's worth of its largest column) only for the rows those did not settle."""
        for small, big in orders:
            if not seqs:
                break
            settled = {
                int(r[0])
                for r in self._execute(cursor, self._select(files, "seq", _in_cand(small, seqs), ""))
            }
            rest = [s for s in seqs if s not in settled]
            if rest:
                settled |= {
                    int(r[0])
                    for r in self._execute(cursor, self._select(files, "seq", _in_cand(big, rest), ""))
                }
            seqs = sorted(settled)
        return seqs

    @staticmethod
    def _drop(cursor: duckdb.DuckDBPyConnection) -> None:
        cursor.execute("DROP TABLE IF EXISTS sets; DROP TABLE IF EXISTS cand")

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
        """`SELECT {select} FROM ev WHERE <f> {rest}` over `files` (and `extra`, when given)."""
        with self._lock:
            cursor = self._open()
            try:
                where, _few, _driven = self._prepare(cursor, files, f, alerts, low, high)
                where = where if extra is None else f"{extra} AND {where}"
                return self._execute(cursor, self._select(files, select, where, rest))
            finally:
                self._drop(cursor)

    def _matching(
        self,
        snap: ArchiveSnapshot,
        f: EventFilter,
        alerts: Mapping[int, tuple[int, ...]],
        low: int | None,
        high: int | None,
        select: str,
        rest: str = "",
    ) -> list[Any]:
        """`SELECT {select} … {rest}` over the matches of `f` with low <= seq <= high, where `select` and `rest`
        name only seq, time_ms and type: answered from the filter's kept matches (archive_matches.py), which
        the first such question over a token-driven filter keeps; a scan of the files otherwise."""
        bounds = " AND ".join(
            ([] if low is None else [f"seq >= {int(low)}"])
            + ([] if high is None else [f"seq <= {int(high)}"])
        )
        key = key_of(snap.files, f, alerts)
        with self._lock:
            cursor = self._open()
            table = self._matches.get(key) if key is not None else None
            if table is None and key is not None:
                try:
                    where, few, driven = self._prepare(cursor, snap.files, f, alerts, None, None)
                    if not driven or (few is None and self._candidates(cursor) > MOST_KEPT):
                        files = snap.covering(
                            NO_LOW if low is None else low, snap.upto if high is None else high
                        )
                        where = f"{bounds} AND {where}" if bounds else where
                        return (
                            self._execute(cursor, self._select(files, select, where, rest)) if files else []
                        )
                    table = self._matches.add(
                        cursor, key, self._select(snap.files, "seq, time_ms, type", where, ""), self._execute
                    )
                finally:
                    self._drop(cursor)
            if table is not None:
                return self._execute(cursor, f"SELECT {select} FROM {table} WHERE {bounds or 'true'} {rest}")  # noqa: S608
        files = snap.covering(NO_LOW if low is None else low, snap.upto if high is None else high)
        return self._query(files, f, alerts, low, high, select, rest) if files else []

    def _look_up(
        self,
        cursor: duckdb.DuckDBPyConnection,
        files: Sequence[ArchiveFile],
        f: EventFilter,
        alerts: Mapping[int, tuple[int, ...]],
        low: int,
        high: int,
    ) -> tuple[str | None, list[int] | None]:
        """The condition of `f` and its few candidates over all of `files` at once, when its token lookups there
        list at most FEW_LOOKED_UP seqs; (None, None) otherwise (a common word: looked up a batch at a time)."""
        compiled = self._compile(cursor, files, f, alerts, low, high)
        if compiled.lookup is None or self._listed(cursor, files, compiled) > FEW_LOOKED_UP:
            return None, None
        where, few, _driven = self._prepare(cursor, files, f, alerts, low, high, compiled, settle=False)
        return where, few

    def _listed(
        self, cursor: duckdb.DuckDBPyConnection, files: Sequence[ArchiveFile], compiled: Compiled
    ) -> int:
        """How many seqs the token files list for the lookups of `compiled` (the rows of `sets`, or more): known
        when the counts that chose a phrase's tokens counted them, read otherwise."""
        if compiled.listed is not None:
            return compiled.listed
        _keys, query = counts_query(set(compiled.tokens))
        return sum(int(n or 0) for n in self._execute(cursor, f"{self._relations(files, True)} {query}")[0])

    def _candidates(self, cursor: duckdb.DuckDBPyConnection) -> int:
        """How many rows `cand` holds (prepared on `cursor`)."""
        return int(self._execute(cursor, "SELECT count(*) FROM cand")[0][0])

    def _compile(
        self,
        cursor: duckdb.DuckDBPyConnection,
        files: Sequence[ArchiveFile],
        f: EventFilter,
        alerts: Mapping[int, tuple[int, ...]],
        low: int | None,
        high: int | None,
    ) -> Compiled:
        """The filter's SQL, its phrases driven by their rarest tokens in these files (counted when a phrase has
        a choice, or a filter of field values may be `_wide`)."""
        first = FilterCompiler(alerts)
        compiled = first.compile(f, low, high, apart=True)
        if not first.wanted or not (first.choosing or compiled.whole):
            return compiled
        keys, query = counts_query(first.wanted)
        found = self._execute(cursor, f"{self._relations(files, True)} {query}")[0]
        return FilterCompiler(alerts, {k: int(n or 0) for k, n in zip(keys, found, strict=True)}).compile(
            f, low, high, apart=True
        )

    def count(
        self,
        snap: ArchiveSnapshot,
        f: EventFilter,
        alerts: Mapping[int, tuple[int, ...]],
        low: int | None = None,
        high: int | None = None,
    ) -> int:
        if not snap.covering(NO_LOW if low is None else low, high if high is not None else snap.upto):
            return 0
        return int(self._matching(snap, f, alerts, low, high, "count(*)")[0][0])

    def counts_by_type(
        self, snap: ArchiveSnapshot, f: EventFilter, alerts: Mapping[int, tuple[int, ...]]
    ) -> dict[str, int]:
        if not snap.files:
            return {}
        rows = self._matching(snap, f, alerts, None, None, "type, count(*)", "GROUP BY type")
        return {str(t): int(n) for t, n in rows}

    def time_span(
        self, snap: ArchiveSnapshot, f: EventFilter, alerts: Mapping[int, tuple[int, ...]]
    ) -> tuple[int, int] | None:
        """The earliest and latest time (ms) of the matching archived events, None when none match."""
        if not snap.files:
            return None
        low, high = self._matching(snap, f, alerts, None, None, "min(time_ms), max(time_ms)")[0]
        return None if low is None else (int(low), int(high))

    def histogram(
        self, snap: ArchiveSnapshot, f: EventFilter, alerts: Mapping[int, tuple[int, ...]], size_ms: int
    ) -> list[tuple[int, str, int]]:
        """(bucket start in ms, family, count) rows."""
        if not snap.files:
            return []
        size = int(size_ms)
        select = f"(time_ms // {size}) * {size}, split_part(type, '.', 1), count(*)"
        rows = self._matching(snap, f, alerts, None, None, select, "GROUP BY 1, 2")
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
        When the newest file does not fill the page and the filter's token lookups list few seqs in the
        others, they are looked up once and the files holding its candidates read at once; otherwise files are read a growing batch at a time from the end the walk starts at, until no
        file left could hold a row that belongs on the page (files overlap in seq: one per month of a move)."""
        if limit <= 0:
            return []
        files = sorted(
            snap.covering(low + 1, high - 1),
            key=lambda a: a.last_seq if newest_first else -a.first_seq,
            reverse=True,
        )
        if not files:
            return []
        needed = limit + offset
        columns = SHOWN + (", raw" if raw else "")
        rest = f"ORDER BY seq {'DESC' if newest_first else 'ASC'} LIMIT {needed}"
        found: list[Any] = []
        with self._lock:
            cursor = self._open()
            try:
                at, batch, looked_up, where = 0, 1, False, "false"
                while at < len(files):
                    if at == 1 and not looked_up:  # the newest file did not fill the page: a rare filter?
                        whole, few = self._look_up(cursor, files[at:], f, alerts, low + 1, high - 1)
                        looked_up, where = whole is not None, whole or where
                        if few is not None:  # only the files holding a candidate, all at once
                            files = files[:at] + [
                                a for a in files[at:] if any(a.first_seq <= s <= a.last_seq for s in few)
                            ]
                            batch = max(1, len(files) - at)
                    group = files[at : at + batch]
                    at, batch = at + batch, batch * 2
                    if not looked_up:  # the lookups over these files alone: a common word's seqs of one month
                        where, _few, _driven = self._prepare(
                            cursor, group, f, alerts, low + 1, high - 1, settle=False
                        )
                    if group:
                        found += self._execute(cursor, self._select(group, columns, where, rest))
                    found.sort(key=lambda r: int(r[0]), reverse=newest_first)
                    del found[needed:]
                    if len(found) == needed and at < len(files):
                        edge = int(found[-1][0])
                        nearest = files[at].last_seq if newest_first else files[at].first_seq
                        if (nearest < edge) if newest_first else (nearest > edge):
                            break
            finally:
                self._drop(cursor)
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
        if not snap.covering(NO_LOW, high):
            return []
        # numbered in DuckDB: a million matching seqs brought into Python held every other thread for ~1 s
        number = "row_number() OVER (ORDER BY seq DESC) - 1"
        rest = f"QUALIFY ({int(first_row)} + {number}) % {int(every)} = 0 ORDER BY seq DESC"
        return [int(r[0]) for r in self._matching(snap, f, alerts, None, high, "seq", rest)]

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
            rows = self._query(snap.files, f, alerts, None, None, SHOWN, compiled_rest)
        else:
            at, seq = int(position[0]), int(position[1])
            rows = self._query(
                snap.files,
                f,
                alerts,
                None,
                None,
                SHOWN,
                compiled_rest,
                extra=f"(time_ms {past} {at} OR (time_ms = {at} AND seq {past} {seq}))",
            )
        return [(int(r[4]), event_of(r)) for r in rows]
