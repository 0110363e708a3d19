"""The archive's index of field values: a field term (`user:ada`, `ip:203.0.113.7`) looked up, not checked on every row.

A field term of the query line whose value starts with a letter or digit matches an event when one of the
field's values holds it where a word starts: the live tier's patterns (query_sql.value_patterns) are `v*` and
`*[^a-z0-9…]v*` over the lower-cased value. So each token file also holds, for every value an event holds in a
field of archive_layout.FIELD_COLUMNS, a row `#<field>:<rest>` for every place a word starts in the value (a word
character at its start or after a character that splits words), `<rest>` the value from there to its end, with
the seqs of the events holding it (`#ip:203.0.113.7`, `#ip:0.113.7`, `#ip:113.7`, `#ip:7`). The term's events
are the seqs of the rows starting with `#<field>:<value>`: one range of the sorted token file, exact (the
live tier's match has no end either: `ip:203.0.113.7` matches 203.0.113.75 in both tiers), read without an
events file. The rows come from the values the events file stores (already lower-cased as SQLite's lower()
does), each taken up to a NUL, as SQLite's GLOB reads text. A value the event's JSON may spell otherwise (an
escape) is filed under `#!<field>:` instead: the live tier's match also holds its full-text superset, which the
JSON holds wherever it holds the value as it is, so the reader meets only those rows with the superset.

`#` sorts before every token the full-text tokenizer makes (letters and digits), so these rows come first and no
free-text lookup meets one. The row `#:` alone lists every event the file's rows cover; a merge joins it as any
row, so a reader uses the rows only when its count, over every file it reads, is the files' events: a file
written by an earlier version (none, or rows of single words under a `#` row), a merge with one, or the team
archive's rows are checked on their columns.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Final

from tenant_events.query import Kind, Term
from tenant_events.query.fields import field_named
from tenant_events.store import duck
from tenant_events.store.archive_layout import FIELD_COLUMNS, PARQUET_OPTIONS, TOKEN_ROW_GROUP

if TYPE_CHECKING:
    import duckdb

MARK: Final = "#"
COVER: Final = MARK + ":"  # the row listing every event the file's field rows cover
SPELLED: Final = "!"  # after MARK: rows of values the event's JSON may spell otherwise (an escape)
# what a JSON string escapes (a quote, a backslash, a control character), as an SQL literal of a regex
_ESCAPED: Final = r"""'["\\\x00-\x1f]'"""
_WORD: Final = r"a-z0-9\x{80}-\x{10ffff}"  # a word's characters (query_sql._NOT_WORD's complement)
_RUN: Final = f"[{_WORD}]+[^{_WORD}]*"  # a word and what follows it up to the next
_FIELDS: Final = frozenset(name for name, _column in FIELD_COLUMNS)
_LOWER: Final = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def lookup_prefix(term: Term) -> str | None:
    """The prefix of the token rows whose seqs are exactly `term`'s events, or None when the rows cannot say
    (a glob, a value not starting with a letter or digit, which the live tier matches anywhere, a NUL, which
    ends SQLite's pattern, a field with a column of its own)."""
    field = field_named(term.field)
    if field is None or field.kind is not Kind.TEXT or field.name not in _FIELDS or term.is_glob:
        return None
    value = term.value.translate(_LOWER)
    if not value[:1].isalnum() or "\x00" in value:  # query_sql.value_patterns: where a word starts
        return None
    return f"{MARK}{field.name}:{value}"


def spelled_prefix(prefix: str) -> str:
    """The rows under `prefix` (lookup_prefix) of values the events' JSON may spell otherwise."""
    return MARK + SPELLED + prefix.removeprefix(MARK)


def words_select(events: str) -> str:
    """The query of the field rows (term, n, seqs) of the events file at `events` (an SQL literal), the `#:` row
    among them (unordered): each value from every place a word starts in it (its runs of a word and the
    characters after it, joined from each run on), under `#!` when the event's JSON may spell it otherwise
    than as it is (no whole JSON string of it in the JSON, in any case, or it holds what JSON escapes). The
    lower-cased JSON is read only for a value the JSON does not hold in its own case."""
    values = ", ".join(
        f"list_transform({column}, v -> {{'f': '{name}', 'v': split_part(v, chr(0), 1)}})"
        for name, column in FIELD_COLUMNS
    )
    quoted = "'\"' || x.v || '\"'"
    per_value = (
        f"SELECT seq, x.f AS f, x.v AS v, NOT regexp_matches(x.v, {_ESCAPED}) AND CASE WHEN contains(raw, {quoted})"  # noqa: S608
        f" THEN true ELSE contains(lower(raw), {quoted}) END AS plain"
        f" FROM (SELECT seq, raw, unnest(list_concat({values})) AS x FROM read_parquet({events}))"
    )
    suffixes = (
        f"SELECT '{MARK}' || CASE WHEN plain THEN '' ELSE '{SPELLED}' END || f || ':' || rest AS term, seq FROM"  # noqa: S608
        " (SELECT seq, f, plain, unnest(list_transform(generate_series(1, len(runs)), k -> array_to_string(runs[k:], '')))"
        f" AS rest FROM (SELECT seq, f, plain, regexp_extract_all(v, '{_RUN}') AS runs FROM ({per_value})))"
    )
    return (
        f"SELECT '{COVER}' AS term, count(*) AS n, list(seq ORDER BY seq) AS seqs FROM read_parquet({events})"  # noqa: S608
        " UNION ALL SELECT term, len(seqs) AS n, seqs FROM (SELECT term, list(seq ORDER BY seq) AS seqs"
        f" FROM (SELECT DISTINCT term, seq FROM ({suffixes})) GROUP BY term)"
    )


def with_words(cur: duckdb.DuckDBPyConnection, events: Path, tokens: Path, out: Path) -> None:
    """The token file `out`: the field words of the events file `events`, then the rows of the token file
    `tokens`, in term order, on an ordered cursor (archive_build.ordered_cursor). The words go to a file of their
    own first, and both files are read as one list: one statement's UNION ALL let DuckDB interleave the two
    (row groups spanning both, which no lookup's statistics prune)."""

    words = out.with_name("words.parquet")
    cur.execute(
        f"COPY (SELECT * FROM ({words_select(duck.literal(str(events)))}) ORDER BY term) TO"  # noqa: S608
        f" {duck.literal(str(words))} ({PARQUET_OPTIONS}, ROW_GROUP_SIZE {TOKEN_ROW_GROUP})"
    )
    cur.execute(
        f"COPY (SELECT term, n, seqs FROM read_parquet([{duck.literal(str(words))}, {duck.literal(str(tokens))}]))"  # noqa: S608
        f" TO {duck.literal(str(out))} ({PARQUET_OPTIONS}, ROW_GROUP_SIZE {TOKEN_ROW_GROUP})"
    )
    words.unlink()
