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
does), each taken up to a NUL, as SQLite's GLOB reads text, made in Python where the writer makes the values
(FieldRows). A value the event's JSON may spell otherwise (an
escape) is filed under `#!<field>:` instead: the live tier's match also holds its full-text superset, which the
JSON holds wherever it holds the value as it is, so the reader meets only those rows with the superset.

`#` sorts before every token the full-text tokenizer makes (letters and digits), so these rows come first and no
free-text lookup meets one. The row `#:` alone lists every event the file's rows cover; a merge joins it as any
row, so a reader uses the rows only when its count, over every file it reads, is the files' events: a file
written by an earlier version (none, or rows of single words under a `#` row), a merge with one, or the team
archive's rows are checked on their columns.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import BinaryIO, Final

import orjson

from tenant_events.query import Kind, Term
from tenant_events.query.fields import field_named
from tenant_events.store.archive_layout import FIELD_COLUMNS

MARK: Final = "#"
COVER: Final = MARK + ":"  # the row listing every event the file's field rows cover
SPELLED: Final = "!"  # after MARK: rows of values the event's JSON may spell otherwise (an escape)
_ESCAPED: Final = re.compile(r'["\\\x00-\x1f]')  # what a JSON string escapes: a quote, a backslash, a control
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
_USER: Final = [name for name, _column in FIELD_COLUMNS].index(_SHARED[0])
_EMAIL: Final = [name for name, _column in FIELD_COLUMNS].index(_SHARED[1])
_JOINT: Final = -1  # FieldRows' index of user and email's joint name
_RUN_RX: Final = re.compile(r"[a-z0-9\x80-\U0010ffff]+")  # where a word starts (a run of its characters)
_PIECE_AT: Final = re.compile(f".{{0,{_PIECE - 1}}}[0-9]")
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
    `#!` (FieldRows); most events have none, and checking here, where the values are made, spared the
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


class FieldRows:
    """The field rows (term, seqs) of a file's events, gathered an event at a time, in seq order, where the
    writer makes the events' values (archive_build._scratch): each value from every place a word starts in it
    but a piece of an identifier (_PIECE) inside it (its runs of a word and the characters after it, from each
    run on), under `#!` when the event's JSON may spell it otherwise (spelled_values), and the `#:` row. Made
    in the engine from the events file instead (a scan of each field's column, the suffixes, a DISTINCT and a
    grouping), they cost 20 µs an event, more than writing the events' file (docs/archive.md "Measured")."""

    def __init__(self) -> None:
        self._rows: dict[str, list[int]] = {}
        self._seqs: list[int] = []
        # the seq lists of each (field, value, spelled?): values repeat (users, organizations), so a value's
        # rows are worked out once and an event's value costs a lookup and its appends
        self._lists: dict[tuple[int, str, bool], tuple[list[int], ...]] = {}

    def add(self, seq: int, fields: Sequence[Sequence[str] | None], spelled: Collection[str]) -> None:
        """One event's rows: `fields` its values of FIELD_COLUMNS (as archive_layout.field_values makes them),
        `spelled` those of its values spelled_values found; `seq` above every seq added before."""
        self._seqs.append(seq)
        lists = self._lists
        user, email = fields[_USER], fields[_EMAIL]
        for at, values in enumerate(fields):
            if not values:
                continue
            for value in values:
                f = at
                if at == _USER and email and value in email:
                    f = _JOINT  # filed once under the joint name
                elif at == _EMAIL and user and value in user:
                    continue  # filed under the joint name with the user's
                key = (f, value, bool(spelled) and value.split("\x00", 1)[0] in spelled)
                targets = lists.get(key)
                if targets is None:
                    targets = lists[key] = self._targets(*key)
                for seqs in targets:
                    if not seqs or seqs[-1] != seq:
                        seqs.append(seq)

    def _targets(self, f: int, value: str, odd: bool) -> tuple[list[int], ...]:
        """The seq lists of the rows of `value` in the field at `f` (_JOINT: user and email's joint name)."""
        name = _SHARED_KEY if f == _JOINT else FIELD_COLUMNS[f][0]
        head = f"{MARK}{SPELLED if odd else ''}{name}:"
        rests = _rests(value.split("\x00", 1)[0], name in _EVERY_WORD)
        return tuple(self._rows.setdefault(head + rest, []) for rest in rests)

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
        rows = dict(self._rows)
        rows[COVER] = self._seqs
        counts = counted or {}
        longest = 0
        terms = sorted(rows.keys() | counts.keys())
        cut = bisect.bisect_left(terms, lines_at) if lines_at else len(terms)
        for k, term in enumerate(terms):
            if k == cut:
                f.writelines(lines)
            seqs = rows.get(term)
            row = (
                {"term": term, "n": counts[term], "seqs": []}
                if seqs is None
                else {"term": term, "n": len(seqs), "seqs": seqs}
            )
            line = orjson.dumps(row, option=orjson.OPT_APPEND_NEWLINE)
            f.write(line)
            longest = max(longest, len(line))
        if cut == len(terms):
            f.writelines(lines)
        return longest


def _rests(value: str, every: bool) -> tuple[str, ...]:
    """`value` from each place a word starts in it that is filed: its first word's, and each next word's but a
    piece of an identifier (unless `every`)."""
    starts = [m.start() for m in _RUN_RX.finditer(value)]
    ends = starts[1:] + [len(value)] * bool(starts)  # a run: a word and what follows it up to the next
    return tuple(
        value[at:]
        for k, (at, end) in enumerate(zip(starts, ends, strict=True))
        if k == 0 or every or not _PIECE_AT.match(value, at, end)
    )
