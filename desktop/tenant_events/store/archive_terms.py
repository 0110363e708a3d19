"""The rows of the archive's token files a filter reads: each token's range of terms, the lookups of a filter's
tokens (`sets`) and the counts that choose among them (archive_sql.py, archive_candidates.py).

The token files are sorted by term, so a condition that bounds `term` lets the row groups' statistics leave out
every row group but the one or two that can hold it. A field's rows (archive_fields.py) lie side by side in the
first row groups: the rows of one field a filter names are read in one range, each row group decoded once, not
once per value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from tenant_events.store.archive_fields import MARK, ROW_FIELDS
from tenant_events.store.duck import literal

_MAX_CHAR: Final = 0x10FFFF

Key = tuple[str, bool]  # a token, and whether every token starting with it is meant


def _after_prefix(token: str) -> str | None:
    """The first text after every one that starts with `token` (its last character that has a next one, made
    that next one), or None when there is none. Not `token + U+10FFFF`: FTS5 keeps that code point in a token,
    and `qzvr` + U+10FFFF is not below it."""
    kept = token.rstrip(chr(_MAX_CHAR))
    if not kept:
        return None
    after = ord(kept[-1]) + 1
    return kept[:-1] + chr(0xE000 if 0xD800 <= after <= 0xDFFF else after)  # no surrogate in UTF-8


def _below(token: str) -> str:
    """` AND term < …`: the bound of the terms starting with `token`, when there is one."""
    after = _after_prefix(token)
    return f" AND term < {literal(after)}" if after is not None else ""


def token_match(token: str, prefix: bool) -> str:
    """The condition on `term` of the token files for `token` (or a token starting with it): a range, which
    the files' row-group statistics prune, then the prefix itself."""
    if prefix:
        return f"term >= {literal(token)}{_below(token)} AND starts_with(term, {literal(token)})"
    return f"term = {literal(token)}"


def _range(group: list[Key]) -> str:
    """The terms from the first of `group` (sorted) to the last and every term starting with it."""
    return f"term >= {literal(group[0][0])}{_below(group[-1][0])}"


def _by_field(keys: list[Key]) -> tuple[list[list[Key]], list[Key]]:
    """`keys` (sorted) as the groups of one field's rows (two or more: `#org:acme`, `#org:globex`), and the
    others one by one. The rows of values user and email share (`#user&email:`) are a group of their own: one
    range from `#user&email:ada` to `#user:ada` holds every shared row after the one and every user row before
    the other (`#email:`'s lie further still), and read them (an OR of two users' cold count over a year of
    3 million events: 7-18% more CPU than the two ranges)."""
    fields: dict[str, list[Key]] = {}
    for key in keys:
        if key[0].startswith(MARK):
            fields.setdefault(key[0].split(":", 1)[0], []).append(key)
    groups = [group for group in fields.values() if len(group) > 1]
    grouped = {key for group in groups for key in group}
    return groups, [key for key in keys if key not in grouped]


def lookup_query(sets: Mapping[Key, str]) -> str:
    """The query of (k, seq) pairs, the events holding each looked-up token (`sets`: token -> k). One read of
    `tok` per token, each filtered by its own range of terms, which the token files' row-group statistics
    prune: an OR of every token's condition made DuckDB read every row group of every file. A field's rows
    are read in one range, each row listed under every key it matches (`#ip:203.0.113.7` and
    `#ip:203.0.113.75` both match `#ip:203.0.113.75`). A prefix may match several terms of one event, which
    then lists it more than once: every use of `sets` asks whether a seq is in it (IN, INTERSECT, UNION), so
    the pairs are not made distinct (a common word's 1.25 million seqs: a hash table of them all)."""
    groups, singles = _by_field(sorted(sets))
    reads = [
        f"SELECT {sets[key]} AS k, unnest(seqs) AS seq FROM tok WHERE {token_match(*key)}"  # noqa: S608
        for key in singles
    ]
    for group in groups:
        ks = ", ".join(f"CASE WHEN {token_match(*key)} THEN {sets[key]} END" for key in group)
        reads.append(
            f"SELECT k, unnest(seqs) AS seq FROM (SELECT unnest(list_filter([{ks}], x -> x IS NOT NULL)) AS k,"  # noqa: S608
            f" seqs FROM tok WHERE {_range(group)} AND ({' OR '.join(token_match(*key) for key in group)}))"
        )
    return " UNION ALL ".join(reads)


def rows_query(keys: set[Key]) -> str:
    """The query of the field rows (term, n, seqs) of `keys` (each a `#…` key), read as `lookup_query` reads
    them, each row once: a filter answered by the rows alone counts them and looks them up from what this
    read once (an e-mail's first screen read each file's range of its rows twice)."""
    groups, singles = _by_field(sorted(keys))
    reads = [f"SELECT term, n, seqs FROM tok WHERE {token_match(*key)}" for key in singles]  # noqa: S608
    reads += [
        f"SELECT term, n, seqs FROM tok WHERE {_range(group)}"  # noqa: S608
        f" AND ({' OR '.join(token_match(*key) for key in group)})"
        for group in groups
    ]
    return " UNION ALL ".join(reads)


def counts_query(wanted: set[Key]) -> tuple[list[Key], str]:
    """The query of how many events hold each wanted token (summed over the token files' `n`), in order: one
    pruned read of the token files per token, as `lookup_query`; a field's words in one read of the range of
    terms from the first to the last (`#ip:203.0.113.25` to `#ip:203.0.113.7`: a row group or two of each
    file, read once)."""
    keys = sorted(wanted)
    groups, _singles = _by_field(keys)
    at = {key: f"g{i}[{j + 1}]" for i, group in enumerate(groups) for j, key in enumerate(group)}
    reads = ", ".join(
        f"(SELECT [{', '.join(f'sum(n) FILTER (WHERE {token_match(*key)})' for key in group)}] FROM tok"  # noqa: S608
        f" WHERE {_range(group)}) AS g{i}"
        for i, group in enumerate(groups)
    )
    sums = ", ".join(at.get(key) or f"(SELECT sum(n) FROM tok WHERE {token_match(*key)})" for key in keys)  # noqa: S608
    return keys, f"SELECT {sums}" + (f" FROM (SELECT {reads})" if reads else "")  # noqa: S608


# a phrase's tokens confirmed by a field row: each a token FTS5 makes of ASCII text, starting with a letter
_CONFIRMABLE: Final = re.compile(r"[a-z][a-z0-9]*")
# between and after them in a row: what splits FTS5's tokens and the rows' words alike (ASCII, not a letter or
# digit); a character past ASCII is left to the JSON (the rows' words hold it, FTS5 may split there)
_SPLIT: Final = r"[^A-Za-z0-9\x{80}-\x{10ffff}]"


def phrase_rows_query(tokens: tuple[str, ...], prefix: bool) -> str | None:
    """The query of the field rows (archive_fields.py) whose term holds FTS5's phrase `tokens` in order, their
    terms alone: `#user:ada lovelace`, `#user&email:ada.lovelace.54fb@…` for "ada lovelace" (the last token a
    prefix with `prefix`), one range of each field's rows. The events those rows list are matches: a row not
    under `#!` is a value whose JSON holds it as a whole string (`"ada lovelace"`, in its case or lower-cased,
    nothing escaped in it), and a row starts where a word starts in it, so its tokens stand side by side in the
    text the index reads (a string's text is kept as it is when the JSON's escapes are decoded; a JSON number
    may be written again otherwise, and makes no token starting with a letter). None when a token may come
    otherwise (a digit first, a letter past ASCII). The rows' seqs, most of a row group's bytes, are read for
    the rows found alone (`rows_seqs_query`)."""
    if len(tokens) < 2 or not all(_CONFIRMABLE.fullmatch(t) for t in tokens):
        return None
    rx = "^#[^:]*:" + f"{_SPLIT}+".join(tokens) + ("" if prefix else f"(?:$|{_SPLIT})")
    return " UNION ALL ".join(
        f"SELECT term FROM tok WHERE {token_match(f'{MARK}{name}:{tokens[0]}', True)}"  # noqa: S608
        f" AND regexp_matches(term, {literal(rx)})"
        for name in ROW_FIELDS
    )


def rows_seqs_query(table: str, bounds: list[tuple[str, str]]) -> str:
    """The seqs of the rows whose terms the table `table` holds: one read of each field's rows from its first
    such term to its last (`bounds`), which the files' row-group statistics prune."""
    return " UNION ALL ".join(
        f"SELECT unnest(seqs) AS seq FROM tok WHERE term >= {literal(low)} AND term <= {literal(high)}"  # noqa: S608
        f" AND term IN (SELECT term FROM {table})"
        for low, high in bounds
    )
