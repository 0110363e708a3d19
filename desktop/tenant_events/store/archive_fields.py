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

import re
from collections.abc import Sequence
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
_ESCAPED: Final = re.compile(r'["\\\x00-\x1f]')  # what a JSON string escapes: a quote, a backslash, a control
_WORD: Final = r"a-z0-9\x{80}-\x{10ffff}"  # a word's characters (query_sql._NOT_WORD's complement)
_RUN: Final = f"[{_WORD}]+[^{_WORD}]*"  # a word and what follows it up to the next
_NOT_WORD: Final = re.compile(r"[^a-z0-9\x80-\U0010ffff]")
# a word whose first three characters hold a digit: a piece of an identifier (auth0|1f3a…, acme-75tz, the 54fb
# of ada.lovelace.54fb@…), filed where a value starts only, except in the fields of addresses
_PIECE: Final = 3
_PIECE_RX: Final = f"^.{{0,{_PIECE - 1}}}[0-9]"
_EVERY_WORD: Final = frozenset({"ip"})
# fields that mostly hold the same values (a user's e-mail is one of its names): a value an event holds in both is
# filed once, under both names
_SHARED: Final = ("user", "email")
_SHARED_KEY: Final = "&".join(_SHARED)
_FIELDS: Final = frozenset(name for name, _column in FIELD_COLUMNS)
ROW_FIELDS: Final = (*sorted(_FIELDS), _SHARED_KEY)  # the names the rows are filed under (`#<name>:`)
_LOWER: Final = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def lookup_prefixes(term: Term) -> tuple[str, ...] | None:
    """The prefixes of the token rows whose seqs are together exactly `term`'s events (its field's rows and
    those of the values it shares, _SHARED), or None when the rows cannot say (a glob, a value not starting
    with a letter or digit, which the live tier matches anywhere, a NUL, which ends SQLite's pattern, a piece
    of an identifier inside a value, a field with a column of its own)."""
    field = field_named(term.field)
    if field is None or field.kind is not Kind.TEXT or field.name not in _FIELDS or term.is_glob:
        return None
    value = term.value.translate(_LOWER)
    if not value[:1].isalnum() or "\x00" in value:  # query_sql.value_patterns: where a word starts
        return None
    if field.name not in _EVERY_WORD and not _filed_inside(value):
        return None
    shared = (_SHARED_KEY,) if field.name in _SHARED else ()
    return tuple(f"{MARK}{name}:{value}" for name in (field.name, *shared))


def _filed_inside(value: str) -> bool:
    """Whether every word `value` may start (where a value starts or inside it) has its rows: not a piece of an
    identifier (_PIECE), and known not to be one — a first word shorter than that and all of `value` may go on
    with a digit."""
    cut = _NOT_WORD.search(value)
    word = value if cut is None else value[: cut.start()]
    if cut is None and len(word) < _PIECE:
        return False
    return not any(c in "0123456789" for c in word[:_PIECE])


def spelled_values(raw: str, fields: Sequence[Sequence[str]]) -> list[str]:
    """The values of `fields` (one event's, as archive_layout.field_values makes them) that its JSON `raw`
    may spell otherwise than as they are, each up to a NUL (as SQLite's GLOB reads it): no whole JSON string
    of it in the JSON, in its case or lower-cased, or it holds what JSON escapes. Such values are filed under
    `#!` (words_select); most events have none, and checking here, where the values are made, spared the
    writer reading the JSON again in the engine."""
    out: list[str] = []
    lowered: str | None = None
    for values in fields:
        for value in values:
            if "\x00" in value:
                value = value.split("\x00", 1)[0]
            quoted = f'"{value}"'
            if quoted in raw:
                if not _ESCAPED.search(value):
                    continue
            else:
                if lowered is None:
                    lowered = raw.lower()
                if quoted in lowered and not _ESCAPED.search(value):
                    continue
            out.append(value)
    return out


def spelled_prefix(prefix: str) -> str:
    """The rows under `prefix` (lookup_prefix) of values the events' JSON may spell otherwise."""
    return MARK + SPELLED + prefix.removeprefix(MARK)


def _values(name: str, column: str, events: str) -> str:
    """The query of (seq, f, v) of one field's values, each up to a NUL: one both _SHARED fields hold under
    their joint name, once."""
    f, other, keep = f"'{name}'", "", "true"
    if name in _SHARED:
        other = f"f_{_SHARED[1 - _SHARED.index(name)]}"
        shared = f"coalesce(list_contains({other}, v), false)"
        if name == _SHARED[0]:
            f = f"CASE WHEN {shared} THEN '{_SHARED_KEY}' ELSE {f} END"
        else:
            keep = f"NOT {shared}"
        other = f"{other}, "
    return (
        f"SELECT seq, {f} AS f, split_part(v, chr(0), 1) AS v"  # noqa: S608 - names made here
        f" FROM (SELECT seq, {other}unnest({column}) AS v FROM read_parquet({events})) WHERE {keep}"
    )


def _suffixes(values: str, spelled: str | None) -> str:
    """The query of (term, seq) of the values (seq, f, v) from each place a word starts in them that is filed."""
    if spelled is None:
        per_value = f"SELECT seq, f, v, true AS plain FROM ({values})"  # noqa: S608
    else:
        per_value = (
            f"SELECT e.seq AS seq, e.f AS f, e.v AS v, o.seq IS NULL AS plain FROM ({values}) AS e"  # noqa: S608
            f" LEFT JOIN (SELECT DISTINCT seq, v FROM read_json({spelled}, columns = {{'seq': 'BIGINT', 'v': 'VARCHAR'}}))"
            " AS o ON o.seq = e.seq AND o.v = e.v"
        )
    every = ", ".join(f"'{name}'" for name in sorted(_EVERY_WORD))
    filed = f"k = 1 OR f IN ({every}) OR NOT regexp_matches(runs[k], '{_PIECE_RX}')"
    return (
        f"SELECT '{MARK}' || CASE WHEN plain THEN '' ELSE '{SPELLED}' END || f || ':' || rest AS term, seq FROM"  # noqa: S608
        " (SELECT seq, f, plain, unnest(list_transform(list_filter(generate_series(1, len(runs)),"
        f" k -> {filed}), k -> array_to_string(runs[k:], ''))) AS rest"
        f" FROM (SELECT seq, f, plain, regexp_extract_all(v, '{_RUN}') AS runs FROM ({per_value})))"
    )


def words_select(events: str, spelled: str | None = None) -> str:
    """The query of the field rows (term, n, seqs) of the events file at `events` (an SQL literal), the `#:` row
    among them (unordered): each value from every place a word starts in it but a piece of an identifier
    (_PIECE) inside it (its runs of a word and the characters after it, joined from each run on), under `#!`
    when the event's JSON may spell it otherwise (`spelled`: a JSON file of the seq and value of each such,
    spelled_values; None when there are none). Each field is read by a scan of its own, as the version before
    did: one scan of every field's column left the engine's threads one row group of the events each."""
    suffixes = " UNION ALL ".join(
        _suffixes(_values(name, column, events), spelled) for name, column in FIELD_COLUMNS
    )
    return (
        f"SELECT '{COVER}' AS term, count(*) AS n, list(seq ORDER BY seq) AS seqs FROM read_parquet({events})"  # noqa: S608
        " UNION ALL SELECT term, len(seqs) AS n, seqs FROM (SELECT term, list(seq ORDER BY seq) AS seqs"
        f" FROM (SELECT DISTINCT term, seq FROM ({suffixes})) GROUP BY term)"
    )


def with_words(
    cur: duckdb.DuckDBPyConnection, events: Path, tokens: Path, out: Path, spelled: Path | None = None
) -> None:
    """The token file `out`: the field words of the events file `events`, then the rows of the token file
    `tokens`, in term order, on an ordered cursor (archive_build.ordered_cursor). The words go to a file of their
    own first, and both files are read as one list: one statement's UNION ALL let DuckDB interleave the two
    (row groups spanning both, which no lookup's statistics prune)."""

    words = out.with_name("words.parquet")
    odd = duck.literal(str(spelled)) if spelled is not None else None
    cur.execute(
        f"COPY (SELECT * FROM ({words_select(duck.literal(str(events)), odd)}) ORDER BY term) TO"  # noqa: S608
        f" {duck.literal(str(words))} ({PARQUET_OPTIONS}, ROW_GROUP_SIZE {TOKEN_ROW_GROUP})"
    )
    cur.execute(
        f"COPY (SELECT term, n, seqs FROM read_parquet([{duck.literal(str(words))}, {duck.literal(str(tokens))}]))"  # noqa: S608
        f" TO {duck.literal(str(out))} ({PARQUET_OPTIONS}, ROW_GROUP_SIZE {TOKEN_ROW_GROUP})"
    )
    words.unlink()
