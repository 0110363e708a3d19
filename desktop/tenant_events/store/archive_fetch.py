"""The archive's reads of events by seq, event id or token, with their raw JSON (archive_reader.py asks the
filters' questions): the page's sentences, the access history's and the directory's reads, exports.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Collection, Iterator, Sequence
from typing import Any, Final

from tenant_events.store import duck
from tenant_events.store.archive_catalog import ArchiveFile, ArchiveSnapshot
from tenant_events.store.archive_layout import canonical_time
from tenant_events.store.archive_source import ArchiveSource
from tenant_events.store.archive_sql import phrase_tokens
from tenant_events.store.live_walk import NO_LOW
from tenant_events.values.events import StoredEvent

SHOWN: Final = (
    "seq, event_id, stream_offset, type, time_ms, time, source, tenant, purpose, summary, received_at"
)


def event_of(row: Sequence[Any], raw: str | None = None) -> StoredEvent:
    """A StoredEvent from a `SHOWN` row."""
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


def _folded(token: str) -> str:
    """The token as FTS5 stores it (lower case, accents off) when the tokenizer makes one token of it."""
    folded = phrase_tokens(token)
    return folded[0] if len(folded) == 1 else token


_EACH_TERM: Final = 64  # terms looked up one by one (each read pruned to its row groups), more: all at once


def _lookup(terms: Collection[str]) -> str:
    """The (seq, term) pairs of `tok` for the terms: one pruned read a term (the token lists are sorted by term,
    so each reads a row group or two of each file; an IN list of them read every row group's lists), or for many
    terms (an access diff's thousands) one read of them all."""
    listed = sorted(terms)
    if len(listed) > _EACH_TERM:
        return f"SELECT DISTINCT unnest(seqs) AS seq, term FROM tok WHERE term IN ({', '.join(duck.literal(t) for t in listed)})"  # noqa: S608
    each = " UNION ALL ".join(
        f"SELECT unnest(seqs) AS seq, term FROM tok WHERE term = {duck.literal(t)}"  # noqa: S608
        for t in listed
    )
    return f"SELECT DISTINCT seq, term FROM ({each})"  # noqa: S608


def _holds(file: ArchiveFile, seqs: Sequence[int]) -> bool:
    """Whether one of the sorted `seqs` lies in the file's range."""
    at = bisect_left(seqs, file.first_seq)
    return at < len(seqs) and seqs[at] <= file.last_seq


def holding(files: Sequence[ArchiveFile], seqs: Sequence[int]) -> list[ArchiveFile]:
    """The files any of `seqs` lies in: a statement over a year's files parses each file's footer first (~2 ms of
    CPU each), where a few candidates lie in a month or two."""
    ordered = sorted(seqs)
    return [a for a in files if _holds(a, ordered)]


class ArchiveFetch(ArchiveSource):
    """Events read by where they are, not by a filter."""

    def naming(
        self, snap: ArchiveSnapshot, token: str | None, needle: str, high: int, chunk: int
    ) -> Iterator[StoredEvent]:
        """Events below `high` whose text holds `token` (any column: a superset of the raw JSON's), newest first,
        with raw JSON, a chunk at a time; without a token, those whose raw JSON contains `needle`."""
        token = _folded(token) if token is not None else None
        while True:
            files = snap.covering(NO_LOW, high - 1)
            if not files:
                return
            if token is None:
                where = f"seq < {int(high)} AND contains(raw, {duck.literal(needle)})"
                rows = self._run(
                    self._select(files, f"{SHOWN}, raw", where, f"ORDER BY seq DESC LIMIT {int(chunk)}")
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
                                files, f"{SHOWN}, raw", where, f"ORDER BY seq DESC LIMIT {int(chunk)}"
                            ),
                        )
                    finally:
                        cursor.execute("DROP TABLE IF EXISTS hits")
            yield from (event_of(r, r[11]) for r in rows)
            if len(rows) < chunk:
                return
            high = int(rows[-1][0])

    def naming_any(
        self, snap: ArchiveSnapshot, tokens: Collection[str], types: Collection[str], high: int
    ) -> list[tuple[StoredEvent, frozenset[str]]]:
        """Events of `types` below `high` whose text holds any of `tokens`, newest first, with raw JSON, each with
        the ones among `tokens` it holds: `naming` for many tokens at once, one look-up of the token lists and
        one read of the events for them all (the versions of every entity an access diff or a page of the table
        names, timeline_query.py `objects_of_many`). A token is taken as `naming` takes it (folded as FTS5
        stores it when it makes one token)."""
        files = snap.covering(NO_LOW, high - 1)
        if not files or not tokens or not types:
            return []
        terms: dict[str, set[str]] = {}
        for token in tokens:
            terms.setdefault(_folded(token), set()).add(token)
        tokens_sql = self._relations(files, True)
        kinds = ", ".join(duck.literal(t) for t in sorted(types))
        with self._lock:
            cursor = self._open()
            try:
                cursor.execute(f"CREATE OR REPLACE TEMP TABLE hits AS {tokens_sql} {_lookup(terms)}")
                seqs = sorted(int(s) for (s,) in self._execute(cursor, "SELECT DISTINCT seq FROM hits"))
                # only the files that hold a hit, only the row groups between the first and the last: a page's
                # few entities are found in a file or two, where every file of the year was read
                holding = [f for f in files if _holds(f, seqs)]
                if not holding:
                    return []
                where = (
                    f"seq BETWEEN {seqs[0]} AND {min(seqs[-1], int(high) - 1)} AND type IN ({kinds})"  # noqa: S608
                    " AND seq IN (SELECT seq FROM hits)"
                )
                held = "(SELECT list(hits.term) FROM hits WHERE hits.seq = ev.seq) AS held"
                rows = self._execute(
                    cursor, self._select(holding, f"{SHOWN}, raw, {held}", where, "ORDER BY seq DESC")
                )
            finally:
                cursor.execute("DROP TABLE IF EXISTS hits")
        return [
            (event_of(r, r[11]), frozenset(t for term in r[12] or () for t in terms[str(term)])) for r in rows
        ]

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
            f"{self._relations(files, False)} SELECT {SHOWN}, raw FROM ev WHERE seq = {int(seq)}"  # noqa: S608
        )
        return event_of(rows[0], rows[0][11]) if rows else None

    def find(self, snap: ArchiveSnapshot, event_id: str) -> StoredEvent | None:
        if not snap.files:
            return None
        with self._lock:
            rows = self._execute(
                self._open(),
                f"{self._relations(snap.files, False)} SELECT {SHOWN}, raw FROM ev WHERE event_id = ? LIMIT 1",  # noqa: S608
                [event_id],
            )
        return event_of(rows[0], rows[0][11]) if rows else None

    def range_raw(self, snap: ArchiveSnapshot, first: int, last: int) -> list[tuple[StoredEvent, str]]:
        files = snap.covering(first, last)
        if not files:
            return []
        rows = self._run(
            f"{self._relations(files, False)} SELECT {SHOWN}, raw FROM ev"  # noqa: S608
            f" WHERE seq BETWEEN {int(first)} AND {int(last)} ORDER BY seq"
        )
        return [(event_of(r), str(r[11])) for r in rows]
