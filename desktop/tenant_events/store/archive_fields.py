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
does), each taken up to a NUL, as SQLite's GLOB reads text, made where the writer makes the values (FieldRows,
in C: store/field_lists.c). A value the event's JSON may spell otherwise (an escape) is filed under `#!<field>:`
instead: the live tier's match also holds its full-text superset, which the
JSON holds wherever it holds the value as it is, so the reader meets only those rows with the superset.

`#` sorts before every token the full-text tokenizer makes (letters and digits), so these rows come first and no
free-text lookup meets one. The row `#:` alone lists every event the file's rows cover; a merge joins it as any
row, so a reader uses the rows only when its count, over every file it reads, is the files' events: a file
written by an earlier version (none, or rows of single words under a `#` row), a merge with one, or the team
archive's rows are checked on their columns.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import BinaryIO, Final

from tenant_events.query import Kind, Term
from tenant_events.query.fields import field_named
from tenant_events.store._postings import FieldLists
from tenant_events.store.archive_layout import FIELD_COLUMNS

MARK: Final = "#"
COVER: Final = MARK + ":"  # the row listing every event the file's field rows cover
SPELLED: Final = "!"  # after MARK: rows of values the event's JSON may spell otherwise (an escape)
_NOT_WORD: Final = re.compile(r"[^a-z0-9\x80-\U0010ffff]")
# a word whose first three characters hold a digit: a piece of an identifier (auth0|1f3a…, acme-75tz, the 54fb
# of ada.lovelace.54fb@…), filed where a value starts only, except in the fields of addresses
_PIECE: Final = 3
_EVERY_WORD: Final = frozenset({"ip"})
# fields that mostly hold the same values (a user's e-mail is one of its names): a value an event holds in both is
# filed once, under both names
_SHARED: Final = ("user", "email")
_SHARED_KEY: Final = "&".join(_SHARED)
_FIELDS: Final = frozenset(name for name, _column in FIELD_COLUMNS)
ROW_FIELDS: Final = (*sorted(_FIELDS), _SHARED_KEY)  # the names the rows are filed under (`#<name>:`)
_NAMES: Final = tuple(name for name, _column in FIELD_COLUMNS)
_USER: Final = _NAMES.index(_SHARED[0])
_EMAIL: Final = _NAMES.index(_SHARED[1])
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


def spelled_prefix(prefix: str) -> str:
    """The rows under `prefix` (lookup_prefix) of values the events' JSON may spell otherwise."""
    return MARK + SPELLED + prefix.removeprefix(MARK)


class FieldRows:
    """The field rows (term, seqs) of a file's events, gathered an event at a time, in seq order, where the
    writer makes the events' values (archive_build._scratch): each value, up to a NUL, from every place a word
    starts in it (a word character at its start or after one that is not) but a piece of an identifier
    (_PIECE) inside it, under `#!` when the event's JSON may spell it otherwise (no whole JSON string of it in
    the JSON, in its case or lower-cased, or it holds what JSON escapes), and the `#:` row. Each event's values
    are checked and filed in C (_postings.FieldLists): in Python they cost 18 µs an event, and made in the engine
    from the events file instead 20 µs, more than writing the events' file (docs/archive.md "Measured")."""

    def __init__(self) -> None:
        heads = tuple((f"{MARK}{name}:", f"{MARK}{SPELLED}{name}:") for name in (*_NAMES, _SHARED_KEY))
        every = tuple(name in _EVERY_WORD for name in (*_NAMES, _SHARED_KEY))
        self._lists = FieldLists(heads, every, _PIECE, _USER, _EMAIL, COVER)

    def add(self, seq: int, raw: str, fields: Sequence[Sequence[str] | None]) -> list[str]:
        """One event's rows: `raw` its JSON, `fields` its values of FIELD_COLUMNS (as archive_layout.field_values
        makes them); `seq` above every seq added before. Returns its values (each up to a NUL, in field order)
        the JSON may spell otherwise: the pair rows leave them out too (archive_pairs.PairRows)."""
        return self._lists.add(seq, raw, fields)

    def write(
        self,
        f: BinaryIO,
        counted: Mapping[str, int] | None = None,
        lines: Iterable[bytes] = (),
        lines_at: str = "",
    ) -> int:
        """The rows, `#:` among them, and `counted`'s (other `#` rows: a count each and no seqs, archive_tally.py)
        in term order into `f`: a JSON line (term, n, seqs) each, as archive_build.tokens_select reads them; and
        `lines`, JSON lines of rows made elsewhere (archive_pairs.py), in order and all of terms from `lines_at`
        up to the next row here, written in their place. Returns the longest line's length (that of `lines`
        not counted)."""
        made = self._lists
        made.count(counted or {})
        for block in iter(lambda: made.block(lines_at or None), b""):
            f.write(block)
        f.writelines(lines)
        for block in iter(made.block, b""):
            f.write(block)
        return made.longest
