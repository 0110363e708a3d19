"""Reads the archive tier for `EventReader` (reader.py): the same questions, over the files of one snapshot.

Every call takes the `ArchiveSnapshot` the caller read in the same SQLite transaction as its live rows, so both
tiers answer for one moment (archive_catalog.py). Newest-first pages walk the files from the newest seq down,
a few at a time (most screens come from the newest file); counts, per-type counts and the histogram read every
file at once. A file deleted under an old snapshot (compaction, retention) surfaces as `ArchiveMoved`: the
caller takes a new snapshot and asks again.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from tenant_events.store import archive_met as met
from tenant_events.store import archive_tally as tally
from tenant_events.store.archive_candidates import ArchiveCandidates, every_candidate
from tenant_events.store.archive_catalog import ArchiveFile, ArchiveSnapshot
from tenant_events.store.archive_fetch import SHOWN, event_of
from tenant_events.store.archive_layout import tokens_name
from tenant_events.store.archive_matches import MOST_KEPT, MOST_SEQS, Matches, key_of
from tenant_events.store.archive_met import met_sql
from tenant_events.store.live_walk import NO_LOW
from tenant_events.store.team_view import TEAM_PREFIX
from tenant_events.values.events import EventFilter, StoredEvent

if TYPE_CHECKING:
    import duckdb

EVERYTHING: Final = EventFilter()
LIST_PART: Final = 4096  # seqs made into Python at a time (`_rows_of`)
FAMILIES: Final = ("user", "organization", "group")


class ArchiveReader(ArchiveCandidates):
    """The archive's half of one `EventReader`; its own DuckDB cursor, opened on first use."""

    def __init__(self, folder: Path) -> None:
        super().__init__(folder)
        self._matches = Matches()
        self._tallies: dict[str, bool] = {}  # a file's tally rows read (archive_tally.CREATE): whole or not

    def _whole_files(
        self, snap: ArchiveSnapshot, f: EventFilter, low: int | None, high: int | None
    ) -> tuple[ArchiveFile, ...] | None:
        """The files holding low <= seq <= high when the tallies may answer `f` over them (archive_tally.py): each
        wholly in that range, none the team archive's; None otherwise."""
        if not tally.answers(f):
            return None
        lo, hi = NO_LOW if low is None else low, snap.upto if high is None else high
        files = snap.covering(lo, hi)
        if any(a.first_seq < lo or a.last_seq > hi or a.name.startswith(TEAM_PREFIX) for a in files):
            return None
        return files

    def _tallied(
        self, snap: ArchiveSnapshot, f: EventFilter, low: int | None = None, high: int | None = None
    ) -> list[str] | None:
        """The token files' paths of the files holding low <= seq <= high, their tally rows in the cursor's table `tallies`,
        when they answer `f` and every such file holds them whole; None otherwise."""
        files = self._whole_files(snap, f, low, high)
        if files is None:
            return None
        with self._lock:
            cursor = self._open()
            unread = {str(self.folder / tokens_name(a.name)): a for a in files if a.name not in self._tallies}
            if unread:
                self._execute(cursor, tally.CREATE)
                self._forget_tallies(cursor, snap)
                self._execute(cursor, tally.load_sql(list(unread)))
                totals = dict(self._execute(cursor, tally.totals_sql(list(unread))))
                for path, a in unread.items():
                    self._tallies[a.name] = totals.get(path) == a.rows
            whole = all(self._tallies[a.name] for a in files)
        return [str(self.folder / tokens_name(a.name)) for a in files] if whole else None

    def _forget_tallies(self, cursor: duckdb.DuckDBPyConnection, snap: ArchiveSnapshot) -> None:
        """The tally rows of files the catalog no longer lists (merged, expired) leave the cursor's table: a
        window's reader lives for weeks of moves and merges, each adding a month's rows."""
        listed = {a.name for a in snap.files}
        if gone := [name for name in self._tallies if name not in listed]:
            self._execute(cursor, tally.forget_sql([str(self.folder / tokens_name(n)) for n in gone]))
            for name in gone:
                del self._tallies[name]

    def close(self) -> None:
        with self._lock:
            self._matches.forget()
            self._tallies.clear()
        super().close()

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
        as_list: bool = False,
    ) -> list[Any]:
        """`SELECT {select} FROM ev WHERE <f> {rest}` over `files` (and `extra`, when given); `as_list`: see
        `_matching`."""
        with self._lock:
            cursor = self._open()
            try:
                where, _few, _driven = self._prepare(cursor, files, f, alerts, low, high)
                where = where if extra is None else f"{extra} AND {where}"
                return _rows_of(cursor, self._select(files, select, where, rest), as_list)
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
        as_list: bool = False,
    ) -> list[Any]:
        """`SELECT {select} … {rest}` over the matches of `f` with low <= seq <= high, where `select` and `rest`
        name only seq, time_ms and type: answered from the filter's kept matches (archive_matches.py), which
        the first such question over a token-driven filter keeps; a scan of the files otherwise. `as_list`:
        `select` is `seq`, and its values come back as one list, newest first (`_rows_of`)."""
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
                    counting = select == "count(*)" and not rest
                    where, few, driven, listed, n = self._sure_or_prepared(
                        cursor, snap, f, alerts, key, counting
                    )
                    # counted without reading events: the scan that keeps the matches (at most MOST_KEPT) waits
                    # for the first question that needs their rows (the window's span, histogram, per-type counts)
                    if counting and listed is not None and n is not None:
                        return [(self._distinct(cursor, listed, bounds) if bounds else n,)]
                    many = n if n is not None else self._candidates(cursor) if few is None and driven else 0
                    if not driven or many > MOST_KEPT:
                        files = snap.covering(
                            NO_LOW if low is None else low, snap.upto if high is None else high
                        )
                        if not files:
                            return []
                        met = (
                            None
                            if listed is None
                            else met_sql(self.folder, files, listed, select, bounds or "true", rest)
                        )
                        where = f"{bounds} AND {where}" if bounds else where
                        return _rows_of(cursor, met or self._select(files, select, where, rest), as_list)
                    kept = "seq, time_ms, type"
                    met = (
                        None if listed is None else met_sql(self.folder, snap.files, listed, kept, "true", "")
                    )
                    table = self._matches.add(
                        cursor, key, met or self._select(snap.files, kept, where, ""), self._execute
                    )
                finally:
                    self._drop(cursor)
            if table is not None:
                held = f"SELECT {select} FROM {table} WHERE {bounds or 'true'} {rest}"  # noqa: S608
                return _rows_of(cursor, held, as_list)
        files = snap.covering(NO_LOW if low is None else low, snap.upto if high is None else high)
        return self._query(files, f, alerts, low, high, select, rest, as_list=as_list) if files else []

    def _sure_or_prepared(
        self,
        cursor: duckdb.DuckDBPyConnection,
        snap: ArchiveSnapshot,
        f: EventFilter,
        alerts: Mapping[int, tuple[int, ...]],
        key: Hashable,
        counting: bool,
    ) -> tuple[str, list[int] | None, bool, str | None, int | None]:
        """`_prepare`'s answer over every file (hold the lock); and when its candidates are all matches (a word's,
        a field value's events the token files list), the table of their seqs (repeats and all: a prefix's terms
        may list an event twice) and how many distinct seqs it holds (None: not counted). Kept for the filter's
        next questions (a count, then its histogram) when there are at most MOST_SEQS: those then look no token
        up. Counted by a bit a seq (archive_met.py), not made distinct first."""
        seqs = self._matches.get(("seqs", key))
        if seqs is None:
            where, few, driven = self._prepare(cursor, snap.files, f, alerts, None, None)
            if few is not None or not every_candidate(where):
                return where, few, driven, None, None
            listed = self._candidates(cursor)
            if not counting and listed > MOST_SEQS:  # too many to keep: met as they are
                return where, few, driven, "cand", None
            n = self._distinct(cursor, "cand", "")
            if n > MOST_SEQS:  # too many to keep: met as they are
                return where, few, driven, "cand", n
            kept = "SELECT seq FROM cand" if listed <= MOST_SEQS else "SELECT DISTINCT seq FROM cand"
            seqs = self._matches.add(cursor, ("seqs", key), kept, self._execute, n)
        where = f"CASE WHEN seq IN (SELECT seq FROM {seqs}) THEN true ELSE false END"  # noqa: S608
        size = self._matches.size_of(seqs)
        return where, None, True, seqs, size if size is not None else self._candidates(cursor, seqs)

    def _distinct(self, cursor: duckdb.DuckDBPyConnection, table: str, where: str) -> int:
        """How many distinct seqs `table`'s rows passing `where` (any, when empty) hold."""
        where = where or "true"
        low, high = self._execute(cursor, met.span_sql(table, where))[0]
        if low is None:
            return 0
        return int(self._execute(cursor, met.distinct_sql(table, where, int(low), int(high)))[0][0])

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
        if f == EVERYTHING and (files := self._whole_files(snap, f, low, high)) is not None:
            return sum(a.rows for a in files)  # the catalog's rows say it
        if (names := self._tallied(snap, f, low, high)) is not None:
            return int(self._run(tally.count_sql(f, names))[0][0])
        return int(self._matching(snap, f, alerts, low, high, "count(*)")[0][0])

    def counts_by_type(
        self, snap: ArchiveSnapshot, f: EventFilter, alerts: Mapping[int, tuple[int, ...]]
    ) -> dict[str, int]:
        if not snap.files:
            return {}
        if (names := self._tallied(snap, f)) is not None:
            return {str(t): int(n) for t, n in self._run(tally.by_type_sql(f, names))}
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
        if size % tally.HOUR_MS == 0 and (names := self._tallied(snap, f)) is not None:
            return [
                (int(b), str(fam), int(n)) for b, fam, n in self._run(tally.histogram_sql(f, names, size))
            ]
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
        rest = f"QUALIFY ({int(first_row)} + {number}) % {int(every)} = 0"
        return self._matching(snap, f, alerts, None, high, "seq", rest, as_list=True)

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


def _rows_of(cursor: duckdb.DuckDBPyConnection, sql: str, as_list: bool) -> list[Any]:
    """The rows of `sql`; `as_list`: its single column `seq` as one list, newest first. A row is a tuple the
    garbage collector tracks, a list's ints are not: 117,000 page keys of a 30M-event year fetched as rows kept
    that many tuples alive at once, and the full collection they set off (20-35 ms of CPU, holding the GIL)
    could fall on the window's thread. The list comes in parts of LIST_PART seqs, each made into Python alone:
    made at once, its 117,000 ints held the GIL for ~20 ms of CPU (far longer on a busy machine, the read
    thread being below the window's priority)."""
    if not as_list:
        return ArchiveReader._execute(cursor, sql)
    number = "(row_number() OVER (ORDER BY seq DESC) - 1)"
    parts = (
        f"SELECT list(seq ORDER BY seq DESC) FROM (SELECT seq, {number} // {LIST_PART} AS part FROM ({sql}))"  # noqa: S608
        " GROUP BY part ORDER BY part"
    )
    seqs: list[Any] = []
    for (part,) in ArchiveReader._one_by_one(cursor, parts):
        seqs += part
    return seqs
