"""How a filter's rows are found in the archive's files: its token lookups, the candidates they leave, the exact
checks kept to those candidates; `ArchiveReader` (archive_reader.py) asks over what this prepares on its cursor."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from tenant_events.store import archive_pairs as pairs
from tenant_events.store.archive_catalog import ArchiveFile
from tenant_events.store.archive_fetch import ArchiveFetch, holding
from tenant_events.store.archive_fields import COVER, MARK, SPELLED
from tenant_events.store.archive_layout import tokens_name
from tenant_events.store.archive_sql import Compiled, FilterCompiler
from tenant_events.store.archive_terms import counts_query, rows_query, rows_seqs_query
from tenant_events.store.duck import literal
from tenant_events.store.team_view import TEAM_PREFIX
from tenant_events.values.events import EventFilter

if TYPE_CHECKING:
    import duckdb

FEW_CANDIDATES: Final = 256  # a filter's candidate rows up to this many are named in its statement (_in_cand)
WIDE_SHARE: Final = 5  # candidates of a field's value past 1/5 of the rows are not met first (_prepare)
FEW_LOOKED_UP: Final = 50_000  # a page's token lookups over every file at once when they list this many seqs


def _in_cand(where: str, few: Sequence[int] | None) -> str:
    """Only the candidates' rows: a few named in the statement, which DuckDB takes into its scan of the files
    (row groups holding none are not read: an e-mail's or an event id's match 1.8 s -> 0.05 s on 1M events);
    more by a CASE, which keeps the exact checks off every other row. The few are named in the CASE too: DuckDB
    ran an AND's checks on every row of the row groups it read (a phrase's order on the JSON of 256 candidates
    in 5 row groups: 555 ms of CPU instead of 236)."""
    if few is not None:
        if not few:
            return "false"
        named = ", ".join(str(int(s)) for s in few)
        return f"seq IN ({named}) AND CASE WHEN seq IN ({named}) THEN {where} ELSE false END"
    return f"CASE WHEN seq IN (SELECT seq FROM cand) THEN {where} ELSE false END"  # noqa: S608 - a table made here


def every_candidate(where: str) -> bool:
    """Whether `where` (from `_prepare`, with many candidates) holds for every candidate in `cand` and no other
    row: the candidates' seqs are then the matches, counted without reading an events file."""
    return where == _in_cand("true", None)


class ArchiveCandidates(ArchiveFetch):
    """The narrowing half of `ArchiveReader`: every method holds its lock and works on its cursor."""

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
        compiled = (
            self._compile(cursor, files, f, alerts, low, high, settle) if compiled is None else compiled
        )
        if compiled.lookup is None:
            return compiled.exact(), None, False
        if self._wide(files, compiled):
            # none to meet: not `driven`
            self._execute(cursor, "CREATE OR REPLACE TEMP TABLE cand (seq BIGINT)")
            return compiled.exact(), None, True
        tokens = self._relations(files, True)
        if self._held is not None and self._held[0] == tuple(a.name for a in files):
            held = self._held[1] >= set(compiled.tokens)  # every token's rows, as `_worded_counts` read them
            tokens = "WITH tok AS (SELECT * FROM held)" if held else tokens
        self._execute(cursor, f"CREATE OR REPLACE TEMP TABLE sets AS {tokens} {compiled.lookup}")
        if compiled.drive is None:
            return compiled.exact(), None, False
        self._execute(cursor, f"CREATE OR REPLACE TEMP TABLE cand AS {compiled.drive}")
        few = self._execute(cursor, "SELECT seq FROM cand LIMIT ?", [FEW_CANDIDATES + 1])
        # a count's many candidates: those the field rows confirm set apart first (a few: after their summaries);
        # a page, which reads the JSON of a month's unconfirmed candidates anyway, does not read the rows
        sure = False
        if len(few) > FEW_CANDIDATES and compiled.sure and settle:
            sure = self._confirm(cursor, files, compiled)
            few = self._execute(cursor, "SELECT seq FROM cand LIMIT ?", [FEW_CANDIDATES + 1])
        # with some confirmed, more than a few left are not settled on their summaries first: the summaries name
        # the entities whose values the rows hold, and the JSON is read for whatever is left (the same row groups)
        settling = settle and compiled.orders and not sure
        if len(few) > FEW_CANDIDATES and settling and self._settle(cursor, files, compiled):
            few = self._with_sure(cursor, sure)
            if len(few) <= FEW_CANDIDATES:
                return _in_cand(compiled.where, [int(r[0]) for r in few]), [int(r[0]) for r in few], True
            return _in_cand(compiled.where, None), None, True
        if len(few) > FEW_CANDIDATES:
            if not sure:
                return _in_cand(compiled.exact(), None), None, True
            self._with_sure(cursor, sure)
            checks = f"WHEN seq IN (SELECT seq FROM sure) THEN {compiled.where}"  # noqa: S608 - tables made here
            checks += f" WHEN seq IN (SELECT seq FROM cand) THEN {compiled.exact()}"  # noqa: S608
            return f"CASE {checks} ELSE false END", None, True
        seqs = self._in_order(
            cursor,
            files,
            [int(r[0]) for r in few],
            compiled.orders,
            compiled.sure if settle and not sure else (),
        )
        if sure:
            self._execute(
                cursor, "CREATE OR REPLACE TEMP TABLE cand AS SELECT unnest(?::BIGINT[]) AS seq", [seqs]
            )
            few = self._with_sure(cursor, sure)
            if len(few) > FEW_CANDIDATES:
                return _in_cand(compiled.where, None), None, True
            seqs = sorted(int(r[0]) for r in few)
        if len(seqs) > 1:
            seqs = self._passing(cursor, files, compiled.where, seqs)
        return _in_cand(compiled.where, seqs), seqs, True

    def _passing(
        self, cursor: duckdb.DuckDBPyConnection, files: Sequence[ArchiveFile], where: str, seqs: list[int]
    ) -> list[int]:
        """The few candidates that pass `where`, checked on its own columns: the shown columns (the event id and
        summary, a row group's worth each, ~10 ms) are then read only in the row groups holding a match, not
        in every one holding a candidate (an e-mail's 19 candidates over the year, 3 of them matches)."""
        rows = self._execute(
            cursor, self._select(holding(files, seqs), "seq", _in_cand(where, seqs), "ORDER BY seq")
        )
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
        sure: tuple[str, ...] = (),
    ) -> list[int]:
        """The few candidates whose phrases stand in order: each checked on the event id and summary first,
        then on the field rows (`sure`, Compiled.sure: no text read), and on the raw JSON (a row group's worth of
        its largest column) only for the rows those did not settle. An event id settles on its own column: its
        rows are not read."""

        def passing(where: str, among: list[int]) -> set[int]:
            sql = self._select(holding(files, among), "seq", _in_cand(where, among), "")
            return {int(r[0]) for r in self._execute(cursor, sql)}

        confirmed: set[int] | None = None
        for small, big in orders:
            if not seqs:
                break
            settled = passing(small, seqs)
            rest = [s for s in seqs if s not in settled]
            if rest and sure:
                if confirmed is None:  # every phrase's rows at once: a seq listed holds each in order
                    rows = self._rows(cursor, files, sure)
                    named = ", ".join(str(int(s)) for s in seqs)
                    found = f"SELECT seq FROM row_seqs WHERE seq IN ({named})"  # noqa: S608 - numbers made here
                    confirmed = {int(r[0]) for r in self._execute(cursor, found)} if rows else set()
                settled |= confirmed.intersection(rest)
                rest = [s for s in rest if s not in confirmed]
            if rest:
                settled |= passing(big, rest)
            seqs = sorted(settled)
        return seqs

    def _rows(
        self, cursor: duckdb.DuckDBPyConnection, files: Sequence[ArchiveFile], phrases: Sequence[str]
    ) -> bool:
        """The table `row_seqs`: the seqs the field rows show every phrase in (Compiled.sure), or False when a phrase
        has no such row. The rows' terms are found first, their column alone; the seqs are then read for those
        rows alone, in each field's range of them (a row group's seqs are most of its bytes: "ada lovelace"'s
        rows over 500,000 events 80 ms of CPU at once, ~30 for the terms of all nine fields)."""
        tokens = self._relations(files, True)
        reads = []
        try:
            for k, query in enumerate(phrases):
                table = f"terms_{k}"
                self._execute(cursor, f"CREATE OR REPLACE TEMP TABLE {table} AS {tokens} {query}")
                bounds = self._execute(
                    cursor,
                    f"SELECT min(term), max(term) FROM {table} GROUP BY split_part(term, ':', 1)",  # noqa: S608
                )
                if not bounds:
                    return False
                reads.append(rows_seqs_query(table, [(str(lo), str(hi)) for lo, hi in bounds]))
            both = " INTERSECT ".join(f"({r})" for r in reads)
            self._execute(cursor, f"CREATE OR REPLACE TEMP TABLE row_seqs AS {tokens} {both}")
            return True
        finally:
            for k in range(len(phrases)):
                cursor.execute(f"DROP TABLE IF EXISTS terms_{k}")

    def _confirm(
        self, cursor: duckdb.DuckDBPyConnection, files: Sequence[ArchiveFile], compiled: Compiled
    ) -> bool:
        """Move to the table `sure` the candidates whose phrases the field rows show in order (Compiled.sure): they
        match once `where` holds, no text of theirs read; True when any was. Of one phrase, the others that the
        pairs of tokens rule out (archive_pairs.py) leave `cand`: the JSON of each was a row group's to read."""
        found = self._rows(cursor, files, compiled.sure)
        if found:
            sql = "CREATE OR REPLACE TEMP TABLE sure AS SELECT seq FROM cand WHERE seq IN (SELECT seq FROM row_seqs)"
            self._execute(cursor, sql)
            found = bool(self._execute(cursor, "SELECT count(*) FROM sure")[0][0])
        if found:
            self._execute(cursor, "DELETE FROM cand WHERE seq IN (SELECT seq FROM sure)")
        if len(compiled.phrases) == 1:
            pairs.rule_out(lambda sql: self._execute(cursor, sql), self.folder, files, compiled.phrases[0])
        return found

    def _with_sure(self, cursor: duckdb.DuckDBPyConnection, sure: bool) -> list[Any]:
        """Put the confirmed candidates (`sure`: any) back in `cand`; its first FEW_CANDIDATES + 1 rows."""
        if sure:
            self._execute(cursor, "INSERT INTO cand SELECT seq FROM sure")
        return self._execute(cursor, "SELECT seq FROM cand LIMIT ?", [FEW_CANDIDATES + 1])

    def _drop(self, cursor: duckdb.DuckDBPyConnection) -> None:
        self._held = None
        cursor.execute(
            "DROP TABLE IF EXISTS sets; DROP TABLE IF EXISTS cand; DROP TABLE IF EXISTS sure;"
            " DROP TABLE IF EXISTS row_seqs; DROP TABLE IF EXISTS held"
        )

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
        compiled = self._compile(cursor, files, f, alerts, low, high, False)
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

    def _candidates(self, cursor: duckdb.DuckDBPyConnection, table: str | None = None) -> int:
        """How many rows `cand` (or `table`) holds (prepared on `cursor`)."""
        return int(self._execute(cursor, f"SELECT count(*) FROM {table or 'cand'}")[0][0])  # noqa: S608 - a name made here

    def _compile(
        self,
        cursor: duckdb.DuckDBPyConnection,
        files: Sequence[ArchiveFile],
        f: EventFilter,
        alerts: Mapping[int, tuple[int, ...]],
        low: int | None,
        high: int | None,
        count: bool = True,
    ) -> Compiled:
        """The filter's SQL, its phrases driven by their rarest tokens in these files (counted when a phrase has
        a choice, or a filter of field values may be `_wide`), its one-word field terms answered by the files'
        field rows when every file holds them (archive_fields.py)."""
        first = FilterCompiler(alerts)
        plain = first.compile(f, low, high, apart=True)
        # the rows confirm a phrase for a count (a page reads its month's JSON anyway): a reader's first look at
        # them reads each file's `#:` row
        wanted_rows = first.worded or (count and first.confirmable)
        worded = (
            FilterCompiler(alerts, None, True) if wanted_rows and self._has_words(cursor, files) else None
        )
        compiled = worded.compile(f, low, high, apart=True) if worded is not None else plain
        # counted: a phrase's choice of tokens, whether the files list a field value their JSON may spell
        # otherwise (archive_fields.SPELLED), or whether values scanned on every row make the filter `_wide`
        may_be_wide = plain.whole and (worded is None or worded.scanned)
        wanted = first.wanted | (worded.wanted if worded is not None else set())
        choosing = first.choosing or (worded is not None and worded.choosing)
        if not wanted or not (choosing or may_be_wide):
            return compiled
        if worded is not None and not worded.scanned:
            counts = self._worded_counts(cursor, files, f, alerts, low, high, wanted)
        else:
            counts = self._counts(cursor, files, wanted)
        if worded is not None:
            worded = FilterCompiler(alerts, counts, True)
            compiled = worded.compile(f, low, high, apart=True)
            if not worded.scanned:
                return compiled
        plain = FilterCompiler(alerts, counts).compile(f, low, high, apart=True)
        # a filter whose values are scanned anyway on every row (`_wide`) scans them all, no lookup at all
        return compiled if worded is not None and not self._wide(files, plain) else plain

    def _worded_counts(
        self,
        cursor: duckdb.DuckDBPyConnection,
        files: Sequence[ArchiveFile],
        f: EventFilter,
        alerts: Mapping[int, tuple[int, ...]],
        low: int | None,
        high: int | None,
        wanted: set[tuple[str, bool]],
    ) -> dict[tuple[str, bool], int]:
        """The counts a filter answered by the field rows needs: its rows' and its phrases' tokens, and its
        terms' full-text supersets (common tokens: an e-mail's `example` and `com`, 12 million events each over
        a year) only when the files list a value their JSON may spell otherwise (`#!`, which the supersets are
        met with): counting them took most of an e-mail's first screen."""
        bare = FilterCompiler(alerts, {}, True)  # no spelled value listed: no superset wanted
        bare.compile(f, low, high, apart=True)
        # the `#!` rows, when `_has_words` saw none in these files, are known to list nothing
        none = set() if any(self._spelled.get(a.name, True) for a in files) else bare.wanted
        counts = dict.fromkeys({key for key in none if key[0].startswith(MARK + SPELLED)}, 0)
        keys = bare.wanted - counts.keys()
        if keys and all(token.startswith(MARK) for token, _p in keys):
            # the rows alone: counted from one read of them, which the lookup then reads too (`_prepare`)
            tokens = self._relations(files, True)
            self._execute(cursor, f"CREATE OR REPLACE TEMP TABLE held AS {tokens} {rows_query(keys)}")
            self._held = (tuple(a.name for a in files), frozenset(keys))
            counts |= self._counts(cursor, files, keys, "WITH tok AS (SELECT * FROM held)")
        elif keys:
            counts |= self._counts(cursor, files, keys)
        rest = wanted - bare.wanted
        if rest and any(n for (token, _p), n in counts.items() if token.startswith(MARK + SPELLED)):
            counts |= self._counts(cursor, files, rest)
        return counts

    def _counts(
        self,
        cursor: duckdb.DuckDBPyConnection,
        files: Sequence[ArchiveFile],
        wanted: set[tuple[str, bool]],
        tokens: str | None = None,
    ) -> dict[tuple[str, bool], int]:
        """How many events of `files` hold each wanted token (counts_query), read from `tokens` when given."""
        keys, query = counts_query(wanted)
        found = self._execute(cursor, f"{tokens or self._relations(files, True)} {query}")[0]
        return {k: int(n or 0) for k, n in zip(keys, found, strict=True)}

    def _has_words(self, cursor: duckdb.DuckDBPyConnection, files: Sequence[ArchiveFile]) -> bool:
        """Whether every one of `files` holds its field words: its `#:` row counts its events. A file never changes
        under its name, so each is read once per reader; the team archive's rows have none. The same read tells
        whether a file lists any value spelled otherwise: those rows (`#!`) sort before `#:`."""
        known = self._worded
        local = [a for a in files if a.name not in known and not a.name.startswith(TEAM_PREFIX)]
        if local:
            paths = {str(self.folder / tokens_name(a.name)): a for a in local}
            listed = ", ".join(literal(p) for p in paths)
            rows = self._execute(
                cursor,
                f"SELECT filename, max(n) FILTER (WHERE term = '{COVER}'), min(term) < '{COVER}'"  # noqa: S608
                f" FROM read_parquet([{listed}], filename = true) WHERE term <= '{COVER}' GROUP BY filename",
            )
            covered = {str(path): (n, bool(spelled)) for path, n, spelled in rows}
            for path, a in paths.items():
                n, spelled = covered.get(path, (None, True))
                known[a.name] = n is not None and int(n) == a.rows
                self._spelled[a.name] = spelled
        return bool(files) and all(known.get(a.name, False) for a in files)
