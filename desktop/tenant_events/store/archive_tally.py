"""A file's events counted per hour and type when it is written, so a count, the counts per type and the
histogram of a filter of types alone (everything, a type, no test events) read no events file.

The writer (archive_build._scratch) puts into each token file, beside the field rows (archive_fields.py), one
row per event type, kind of event (test or not) and hour that has such events: `#~:<type>:<hour>` and
`#~test:<type>:<hour>` (hour: time_ms // 3,600,000), its count in the row's `n` and no seqs. A reader reads their
terms and counts alone: a term's list of numbers was read with its row group's other lists (the tokens `0`, `1`…
hold most events), 150 ms of CPU a month's file. A merge adds up the counts of a term over its files
(archive_merge.py), as one write of their events would count them. A file's rows are used only when their
counts add up to its events (a file written before them, or a merge with one, has fewer: read as before); an
event before 1970 is not counted, so such a file is read as before too (DuckDB's integer division truncates where
the hours would floor). The histogram is counted so when its bucket is whole hours (every size the window takes
from an hour up); a smaller bucket, a time window, a tenant or a query reads the files.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Final

from tenant_events.store.duck import literal
from tenant_events.values.events import EventFilter

HOUR_MS: Final = 3_600_000
MARK: Final = "#~"  # after `#` the field rows' names (letters, `!`, `:`) sort apart from it
TEST: Final = "test"  # the purpose of a test event (StoredEvent.is_test)


def term_of(kind: str, test: bool, hour: int) -> str:
    return f"{MARK}{TEST if test else ''}:{kind}:{hour}"


class Tally:
    """A file's counts per (type, test or not, hour), gathered an event at a time where the writer makes its
    records."""

    def __init__(self) -> None:
        self._counts: Counter[tuple[str, bool, int]] = Counter()

    def add(self, time_ms: int, kind: str, purpose: str | None) -> None:
        if time_ms >= 0:
            self._counts[(kind, purpose == TEST, time_ms // HOUR_MS)] += 1

    def rows(self) -> dict[str, int]:
        """term -> its count."""
        return {term_of(kind, test, hour): n for (kind, test, hour), n in self._counts.items()}


def answers(f: EventFilter) -> bool:
    """Whether the tallies answer `f`: types and test events alone."""
    return not f.text.strip() and not f.query.strip() and f.since is None and f.until is None and not f.tenant


# A reader's tally rows, read once per file into its cursor's table: a month's 26,000 rows brought into Python
# and added up there took 40-60 ms of CPU a file, the engine's sums over the table a few.
CREATE: Final = "CREATE TEMP TABLE IF NOT EXISTS tallies (name VARCHAR, kind VARCHAR, test BOOLEAN, hour BIGINT, n BIGINT)"


def load_sql(paths: Sequence[str]) -> str:
    """Into `tallies`, the tally rows of the token files at `paths` (each row's `name`: its file's path). A type
    holds no `:`; a row of another form (no hour) is not counted, and its file is then read as before. (A
    regular expression's parts, each taken from it, cost 10 times these.)"""
    listed = ", ".join(literal(p) for p in paths)
    hour = "TRY_CAST(split_part(term, ':', 3) AS BIGINT)"
    return (
        f"INSERT INTO tallies SELECT filename, split_part(term, ':', 2), starts_with(term, '{MARK}{TEST}:'), {hour}, n"  # noqa: S608 - literals quoted
        f" FROM read_parquet([{listed}], filename = true)"
        f" WHERE term >= '{MARK}' AND term < '{MARK}~' AND {hour} IS NOT NULL"
    )


def totals_sql(names: Sequence[str]) -> str:
    """(name, events counted) of these files."""
    return f"SELECT name, sum(n)::BIGINT FROM tallies WHERE name IN ({_names(names)}) GROUP BY name"  # noqa: S608 - literals quoted


def forget_sql(paths: Sequence[str]) -> str:
    return f"DELETE FROM tallies WHERE name IN ({_names(paths)})"  # noqa: S608 - literals quoted


def count_sql(f: EventFilter, names: Sequence[str]) -> str:
    return f"SELECT coalesce(sum(n), 0)::BIGINT FROM tallies WHERE {_where(f, names)}"  # noqa: S608 - literals quoted


def by_type_sql(f: EventFilter, names: Sequence[str]) -> str:
    return f"SELECT kind, sum(n)::BIGINT FROM tallies WHERE {_where(f, names)} GROUP BY kind"  # noqa: S608 - literals quoted


def histogram_sql(f: EventFilter, names: Sequence[str], size_ms: int) -> str:
    """(bucket start in ms, family, count) rows, as archive_reader.histogram counts them from the events;
    `size_ms` whole hours."""
    size = int(size_ms)
    return (
        f"SELECT (hour * {HOUR_MS} // {size}) * {size}, split_part(kind, '.', 1), sum(n)::BIGINT FROM tallies"  # noqa: S608 - literals quoted
        f" WHERE {_where(f, names)} GROUP BY 1, 2"
    )


def _names(names: Sequence[str]) -> str:
    return ", ".join(literal(n) for n in names) or "NULL"


def _where(f: EventFilter, names: Sequence[str]) -> str:
    parts = [f"name IN ({_names(names)})"]
    if f.types:
        parts.append(f"kind IN ({', '.join(literal(t) for t in sorted(f.types))})")
    if not f.include_test:
        parts.append("NOT test")
    return " AND ".join(parts)


TALLIED: Final = f"starts_with(term, '{MARK}')"  # a token row that is a tally's


def merged_sql(source: str, where: str) -> str:
    """The tally rows (term, n, seqs) of `source` (the rows of several files) that pass `where`, each term's counts
    added up: as one file written with all of their events holds them (archive_merge.py)."""
    return f"SELECT term, sum(n)::BIGINT AS n, []::BIGINT[] AS seqs FROM {source} {where} GROUP BY term"  # noqa: S608 - a query made here
