"""A file's events counted per hour and type when it is written, so a count, the counts per type and the
histogram of a filter of types alone (everything, a type, no test events) read no events file.

The writer (archive_build._scratch) puts into each token file, beside the field rows (archive_fields.py), one
row per event type and kind of event (test or not): `#~:<type>` and `#~test:<type>`, whose list holds one number
per hour that has such events, `hour << 32 | count` (hour: time_ms // 3,600,000). A merge joins a term's lists
as any row's (archive_merge.py), so a merged file's row holds each of its files' numbers: the reader adds the
counts of an hour. Numbers sort by hour whatever the merge does to a list. A file's rows are used only when
their counts add up to its events (a file written before them, or a merge with one, has fewer: read as before);
an event before 1970 is not counted, so such a file is read as before too (DuckDB's integer division truncates
where the hours would floor). The histogram is counted so when its bucket is whole hours (every size the
window takes from an hour up); a smaller bucket, a time window, a tenant or a query reads the files.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from tenant_events.store.duck import literal
from tenant_events.values.events import EventFilter

HOUR_MS: Final = 3_600_000
MARK: Final = "#~"  # after `#` the field rows' names (letters, `!`, `:`) sort apart from it
TEST: Final = "test"  # the purpose of a test event (StoredEvent.is_test)
_SHIFT: Final = 32
_LOW: Final = (1 << _SHIFT) - 1


def term_of(kind: str, test: bool) -> str:
    return f"{MARK}{TEST if test else ''}:{kind}"


class Tally:
    """A file's counts per (type, test or not, hour), gathered an event at a time where the writer makes its
    records."""

    def __init__(self) -> None:
        self._counts: Counter[tuple[str, bool, int]] = Counter()

    def add(self, time_ms: int, kind: str, purpose: str | None) -> None:
        if time_ms >= 0:
            self._counts[(kind, purpose == TEST, time_ms // HOUR_MS)] += 1

    def rows(self) -> dict[str, list[int]]:
        """term -> its numbers (`hour << 32 | count`), by hour."""
        out: dict[str, list[int]] = {}
        for (kind, test, hour), n in sorted(self._counts.items()):
            out.setdefault(term_of(kind, test), []).append(hour << _SHIFT | n)
        return out


@dataclass(frozen=True, slots=True)
class Counted:
    """One file's counts: (type, test) -> hour -> events."""

    counts: Mapping[tuple[str, bool], Mapping[int, int]]

    @property
    def total(self) -> int:
        return sum(sum(hours.values()) for hours in self.counts.values())


def read_rows(rows: Iterable[tuple[str, Sequence[int]]]) -> Counted:
    """A file's tally rows (term, numbers) as counts."""
    counts: dict[tuple[str, bool], dict[int, int]] = {}
    for term, numbers in rows:
        head, _colon, kind = term.removeprefix(MARK).partition(":")
        hours = counts.setdefault((kind, head == TEST), {})
        for number in numbers:
            hour = int(number) >> _SHIFT
            hours[hour] = hours.get(hour, 0) + (int(number) & _LOW)
    return Counted(counts)


def answers(f: EventFilter) -> bool:
    """Whether the tallies answer `f`: types and test events alone."""
    return not f.text.strip() and not f.query.strip() and f.since is None and f.until is None and not f.tenant


def _kept(f: EventFilter, kind: str, test: bool) -> bool:
    return (not f.types or kind in f.types) and (f.include_test or not test)


def count(files: Iterable[Counted], f: EventFilter) -> int:
    return sum(
        sum(hours.values()) for c in files for (kind, test), hours in c.counts.items() if _kept(f, kind, test)
    )


def by_type(files: Iterable[Counted], f: EventFilter) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in files:
        for (kind, test), hours in c.counts.items():
            if _kept(f, kind, test) and (n := sum(hours.values())):
                out[kind] = out.get(kind, 0) + n
    return out


def histogram(files: Iterable[Counted], f: EventFilter, size_ms: int) -> list[tuple[int, str, int]]:
    """(bucket start in ms, family, count) rows, as archive_reader.histogram counts them; `size_ms` whole
    hours."""
    out: Counter[tuple[int, str]] = Counter()
    for c in files:
        for (kind, test), hours in c.counts.items():
            if not _kept(f, kind, test):
                continue
            family = kind.split(".", 1)[0]
            for hour, n in hours.items():
                out[(hour * HOUR_MS // size_ms * size_ms, family)] += n
    return [(start, family, n) for (start, family), n in out.items() if n]


def tallies_query(paths: Sequence[str]) -> str:
    """The tally rows (filename, term, numbers) of these token files: a range of terms, a row group or two of
    each file."""
    listed = ", ".join(literal(p) for p in paths)
    return (
        f"SELECT filename, term, seqs FROM read_parquet([{listed}], filename = true)"  # noqa: S608 - paths quoted
        f" WHERE term >= '{MARK}' AND term < '{MARK}~'"
    )


def of_rows(paths: Sequence[str], rows: Iterable[tuple[str, str, Sequence[int]]]) -> dict[str, Counted]:
    """Each path's counts from the rows tallies_query read (a path with none: empty counts)."""
    by_path: dict[str, list[tuple[str, Sequence[int]]]] = {p: [] for p in paths}
    for path, term, numbers in rows:
        by_path.setdefault(str(path), []).append((str(term), numbers))
    return {p: read_rows(found) for p, found in by_path.items()}


TALLIED: Final = f"starts_with(term, '{MARK}')"  # a token row that is a tally's


def merged_sql(source: str, where: str) -> str:
    """The tally rows (term, numbers) of `source` (the rows of several files) that pass `where`, each hour's
    counts added up: as one file written with all of their events holds them (archive_merge.py)."""
    unit = 1 << _SHIFT
    return (
        f"SELECT term, list(hour * {unit} + total ORDER BY hour) AS seqs FROM (SELECT term, number // {unit} AS hour,"  # noqa: S608 - numbers and a query made here
        f" sum(number % {unit})::BIGINT AS total FROM (SELECT term, unnest(seqs) AS number FROM {source} {where})"
        " GROUP BY term, hour) GROUP BY term"
    )
