"""The archive's index of field words: a field term (`user:ada`, `org:acme`) looked up, not checked on every row.

A field term of the query line with a plain one-word value matches an event when one of the field's values has
a word starting with it: the live tier's patterns (query_sql.value_patterns) are `v*` and `*[^a-z0-9…]v*` over
the lower-cased value, so where the term's characters are all word characters (ASCII letters and digits, and
everything past ASCII), the match starts a run of word characters. So each token file also holds, for every
word of every value an event holds in a field of archive_layout.FIELD_COLUMNS, a row `#<field>=<word>` with the
seqs of the events holding it; the term's events are the seqs of the rows starting with `#<field>=<value>`: a
range of the sorted token file, exact, read without an events file. The words come from the values the events
file stores (already lower-cased as SQLite's lower() does), each taken up to a NUL, as SQLite's GLOB reads text.

A value of several words (`ip:203.0.113.7`) is no range of rows, but its matches hold each of its words
(`lookup_words`): the reader meets the rarest of them and checks the value on those events alone.

`#` sorts before every token the full-text tokenizer makes (letters and digits), so these rows come first and no
free-text lookup meets one. The row `#` alone lists every event the file's field words cover; a merge joins it
as any row, so a reader uses the words only when its count, over every file it reads, is the files' events: a
file written by an earlier version, a merge with one, or the team archive's rows are checked on their columns.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Final

from tenant_events.query import Kind, Term
from tenant_events.query.fields import field_named
from tenant_events.store import duck
from tenant_events.store.archive_layout import FIELD_COLUMNS, PARQUET_OPTIONS, TOKEN_ROW_GROUP

if TYPE_CHECKING:
    import duckdb

MARK: Final = "#"
_FIELDS: Final = frozenset(name for name, _column in FIELD_COLUMNS)
_SPLIT: Final = (
    r"[^a-z0-9\x{80}-\x{10ffff}]+"  # what splits a value into words (query_sql._NOT_WORD, repeated)
)
_WORD: Final = re.compile("[a-z0-9\x80-\U0010ffff]+")  # a word of a value (what _SPLIT leaves)
_LOWER: Final = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _word_char(c: str) -> bool:
    return "a" <= c <= "z" or "0" <= c <= "9" or c >= "\x80"


def lookup_prefix(term: Term) -> str | None:
    """The prefix of the token rows whose seqs are exactly `term`'s events, or None when the words cannot say
    (a glob, a value holding a character that splits words, a field with a column of its own)."""
    field = field_named(term.field)
    if field is None or field.kind is not Kind.TEXT or field.name not in _FIELDS or term.is_glob:
        return None
    value = term.value.translate(_LOWER)
    if not value[:1].isalnum() or not all(_word_char(c) for c in value):
        return None
    return f"{MARK}{field.name}={value}"


def lookup_words(term: Term) -> tuple[tuple[str, bool], ...] | None:
    """The field-word rows that every event `term` matches holds, each (row, as a prefix), for a value of
    several words (`email:ada@example.com`, `ip:203.0.113.7`); None when `lookup_prefix` answers the term or
    the words cannot narrow it. A match holds the value where a word starts (or anywhere, for a value starting
    with punctuation), so each of its words that starts after a character splitting words, or at its start,
    starts a word of the event's value; one followed by such a character is that whole word. The events holding
    them all are a superset of the matches (their order and punctuation are not in the words): the reader
    checks the values of those alone."""
    field = field_named(term.field)
    if field is None or field.kind is not Kind.TEXT or field.name not in _FIELDS or term.is_glob:
        return None
    value = term.value.translate(_LOWER)
    if "\x00" in value or lookup_prefix(term) is not None:  # a NUL ends SQLite's pattern
        return None
    anchored = value[:1].isalnum()  # query_sql.value_patterns: where a word starts, or anywhere
    keys = [
        (f"{MARK}{field.name}={word.group()}", word.end() == len(value))
        for word in _WORD.finditer(value)
        if word.start() > 0 or anchored  # else it may end a longer word of the value
    ]
    return tuple(keys) or None


def words_select(events: str) -> str:
    """The query of the field words' rows (term, n, seqs) of the events file at `events` (an SQL literal), the
    `#` row among them (unordered)."""
    per_field = " UNION ALL ".join(
        f"SELECT '{MARK}{name}=' || w AS term, seq FROM (SELECT seq,"  # noqa: S608 - names made here
        f" unnest(regexp_split_to_array(split_part(v, chr(0), 1), '{_SPLIT}')) AS w"
        f" FROM (SELECT seq, unnest({column}) AS v FROM read_parquet({events}))) WHERE w <> ''"
        for name, column in FIELD_COLUMNS
    )
    return (
        f"SELECT '{MARK}' AS term, count(*) AS n, list(seq ORDER BY seq) AS seqs FROM read_parquet({events})"  # noqa: S608
        " UNION ALL SELECT term, len(seqs) AS n, seqs FROM (SELECT term, list(seq ORDER BY seq) AS seqs"
        f" FROM (SELECT DISTINCT term, seq FROM ({per_field})) GROUP BY term)"
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
