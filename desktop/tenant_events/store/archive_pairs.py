"""Rows of tokens that stand side by side, so a phrase's candidates that do not hold it are ruled out with no
JSON read.

A phrase's candidates hold all its tokens; the field rows (archive_fields.py) confirm those that hold it inside
one value, and the others' order was checked on their raw JSON, whose column DuckDB decompresses a row group at
a time however few of its rows are wanted: `"ada lovelace"`'s users named Lovelace whose client is "Dashboard
(Ada)" made its count read every row group's JSON (docs/archive.md "Pairs of tokens").

So the writer (archive_build._scratch) lists, for each event whose indexed text (event id, summary, the raw
JSON as fts_text.indexed_raw gives it) is all ASCII, where FTS5's tokens are each run of a-z and 0-9 lower-cased,
the pairs of tokens that stand side by side in one column, `#|<a> <b>`, with the events holding them; but only
pairs of two words of the file's values (`#|=<word>`, its `n` the first seq from which its pairs are listed: the
values seen so far), and that do not lie inside one
JSON string holding a value whose field rows are filed as it is (`#`, not `#!`: those rows confirm such a
phrase). Words are tokens of letters alone (a value's hex pieces would list a pair or two each); events with text
past ASCII are listed under `#|!`, the events covered counted in `#|#`'s `n`.

A candidate the field rows do not confirm cannot hold a phrase of tokens of letters alone when it lists none of
the phrase's pairs, it is not under `#|!`, and each token is a word listed from at or before its seq (the last
of a prefix phrase: every token of the file starting with it): a match inside one value is a field row's (its
first token starts a row), and a match elsewhere has a pair outside a value, listed. A merge joins the pair
rows and `#|!` as any token, adds up `#|#` and keeps a word only when every file lists it, from the latest of
their seqs (merged_sql): a file whose `#|#` is short of its events (written before these rows, or merged with
one) is read as before.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Final

from tenant_events.store._postings import PairLists
from tenant_events.store.archive_catalog import ArchiveFile
from tenant_events.store.archive_layout import tokens_name
from tenant_events.store.archive_terms import token_match
from tenant_events.store.duck import literal

MARK: Final = "#|"  # after the field rows (`#<field>:`, `#!`, `#:`), before the tallies (`#~`)
UNSURE: Final = MARK + "!"  # events whose pairs are not listed: their text holds a character past ASCII
COVER: Final = (
    MARK + "#"
)  # n: the events whose pairs are listed or which are under UNSURE (a merge adds them up)
WORD: Final = MARK + "="  # `#|=<word>`, n: the first seq whose pairs of it are listed
_PIECE: Final = 3  # a phrase's first token with a digit in its first 3 characters may start no field row

# FTS5's tokens of ASCII text: runs of a-z and 0-9, lower-cased; \x01 kept: it keeps two tokens from being a pair
_TOKENS: Final = bytes(
    c + 32 if 65 <= c <= 90 else c if (48 <= c <= 57 or 97 <= c <= 122 or c == 1) else 32 for c in range(256)
)
_LETTERS: Final = re.compile(rb"[a-z]+")
_APART: Final = b" \x01 "  # a value's tokens in a string of it: not side by side
_WORD_RX: Final = re.compile(r"(?<![a-z0-9])[a-z]+(?![a-z0-9])")  # a token of letters alone
FIRST: Final = MARK  # every row's term is at or after it, and before AFTER
AFTER: Final = "#}"
# a character outside every JSON string is white space, `{}[],:`, a number's or true/false/null's: a quoted value
# holding another letter is found in the JSON only where a string of it stands (none of ` "\` or control: filed)
_IN_STRING_ONLY: Final = re.compile(r"[bcdghijkmopqvwxyz]")
_ESCAPED: Final = re.compile(r'["\\\x00-\x1f]')  # what JSON escapes in a string (archive_fields: filed `#!`)


class PairRows:
    """A file's pair rows, gathered an event at a time in seq order where the writer makes its records: each
    value's words and mark worked out once, when it is first seen (_first_seen), each event's values looked up
    and its tokens and pairs found in C (PairLists), which writes the rows."""

    def __init__(self) -> None:
        self._lists = PairLists(_first_seen)

    def add(
        self,
        seq: int,
        event_id: str,
        summary: str,
        text: str,
        values: Sequence[Sequence[str] | None],
        spelled: Sequence[str],
    ) -> None:
        """One event: its id, summary and indexed JSON `text`, its values of FIELD_COLUMNS, and those of them its
        JSON may spell otherwise (archive_fields.FieldRows.add); `seq` above every seq added before. An event
        whose texts are not all ASCII is listed under UNSURE; otherwise its \x01 made spaces, the JSON
        lower-cased and the mark of each of its values (but those spelled otherwise) replaced in it
        (pair_lists.c)."""
        self._lists.add(seq, event_id, summary, text, values, spelled)

    def lines(self) -> Iterator[bytes]:
        """The rows as JSON lines (term, n, seqs) in term order, all between FIRST and AFTER: UNSURE, COVER (its
        `n` the events), the words (`n` the first seq of their pairs) and the pairs (their events)."""
        return iter(self._lists.block, b"")

    @property
    def longest(self) -> int:
        """The longest line `lines` gave."""
        return self._lists.longest


def _first_seen(lists: PairLists, seq: int, value: str) -> tuple[bytes, bytes] | None:
    """A value first seen at `seq` (in an event of ASCII texts): its words listed from there (those not listed
    before; a value seen again adds none), and its mark."""
    for word in _WORD_RX.findall(value):
        lists.word(word.encode(), seq)
    return _mark(value)


def _mark(value: str) -> tuple[bytes, bytes] | None:
    """The quoted value as the lower-cased JSON holds it, and the same with its tokens kept apart; None when its
    tokens cannot stand side by side in it or it may be found where no string of it stands."""
    if not value.isascii() or _ESCAPED.search(value) or not _IN_STRING_ONLY.search(value):
        return None
    quoted = value.encode()
    tokens = quoted.translate(_TOKENS).split()
    if len(tokens) < 2 or b"\x01" in quoted:
        return None
    return b'"' + quoted + b'"', b'"' + _APART.join(tokens) + b'"'


COUNTED: Final = f"(term = '{COVER}' OR (term >= '{WORD}' AND term < '{MARK}>'))"  # rows of a count, no seqs


def merged_sql(source: str, where: str, files: int) -> str:
    """The COUNTED rows (term, n, seqs) of `source` (the rows of `files` files) that pass `where`, as a merge
    keeps them: COVER added up, a word kept only when every file lists it, from the latest of their seqs (a
    file's pairs of it are listed from its own seq on; one that lacks it lists none)."""
    return (
        f"SELECT term, (CASE WHEN term = '{COVER}' THEN sum(n) ELSE max(n) END)::BIGINT AS n, []::BIGINT[] AS seqs"  # noqa: S608 - a query made here
        f" FROM {source} {where} GROUP BY term HAVING term = '{COVER}' OR count(*) = {int(files)}"
    )


# A reader's side: the candidates of a phrase that these rows rule out.


def can_rule_out(tokens: Sequence[str]) -> bool:
    """Whether the rows may rule out candidates of the phrase `tokens` (FTS5's, in order): two or more tokens of
    letters alone, each a listed word's kind (the first then starts a field row wherever a value holds it)."""
    return len(tokens) >= 2 and all(_LETTERS.fullmatch(t.encode()) for t in tokens)


def facts_sql(paths: Sequence[str], tokens: Sequence[str], prefix: bool) -> str:
    """(file, term, n) of each file's COVER and its rows of the words `tokens`, a pruned read of each term; the
    last a prefix with `prefix`: the tokens of the file starting with it (its vocabulary) and its words that do."""
    listed = ", ".join(literal(p) for p in paths)
    whole = tokens[:-1] if prefix else tokens
    tests = [f"term = {literal(t)}" for t in (COVER, *(WORD + t for t in dict.fromkeys(whole)))]
    if prefix:
        tests += [token_match(tokens[-1], True), token_match(WORD + tokens[-1], True)]
    return " UNION ALL ".join(
        f"SELECT filename, term, n FROM read_parquet([{listed}], filename = true) WHERE {test}"  # noqa: S608 - literals quoted
        for test in tests
    )


def held_sql(paths: Sequence[str], tokens: Sequence[str], prefix: bool) -> str:
    """The seqs the files list under UNSURE or a pair of `tokens` (the last a prefix with `prefix`): the
    candidates not ruled out."""
    listed = ", ".join(literal(p) for p in paths)
    pairs = list(dict.fromkeys(f"{MARK}{a} {b}" for a, b in itertools.pairwise(tokens)))
    tests = [token_match(t, prefix and k == len(pairs) - 1) for k, t in enumerate(pairs)]
    return " UNION ALL ".join(
        f"SELECT unnest(seqs) AS seq FROM read_parquet([{listed}]) WHERE {test}"  # noqa: S608 - literals quoted
        for test in [f"term = {literal(UNSURE)}", *tests]
    )


def from_seqs(
    facts: Sequence[tuple[str, str, int]],
    files: Sequence[tuple[str, int]],
    tokens: Sequence[str],
    prefix: bool,
) -> dict[str, int | None]:
    """Each file's first seq whose pairs of `tokens` are listed (`files`: its path and events), or None when its
    rows do not cover its events or lack a word: with `prefix`, every token of the file that starts with the
    last (the files' vocabulary: none of them starts with `#`) is one of its words."""
    got: dict[str, dict[str, int]] = {}
    for path, term, n in facts:
        got.setdefault(str(path), {})[str(term)] = int(n)
    out: dict[str, int | None] = {}
    for path, events in files:
        held = got.get(path, {})
        wanted = list(tokens[:-1] if prefix else tokens)
        wanted += [t for t in held if prefix and not t.startswith("#")]
        words = [held.get(WORD + t) for t in wanted]
        ok = held.get(COVER) == events and all(w is not None for w in words)
        out[path] = max((int(w) for w in words if w is not None), default=0) if ok else None
    return out


def rule_out_sql(ranges: Sequence[tuple[int, int, int | None]], held: str) -> str:
    """Delete from `cand` the candidates not in the table `held`, each of whose files (`ranges`: its first and
    last seq, and the first seq its pairs cover, or None) covers it: files of months apart may share seqs."""
    listed = ", ".join(f"({int(lo)}, {int(hi)}, {'NULL' if f is None else int(f)})" for lo, hi, f in ranges)
    return (
        f"DELETE FROM cand WHERE seq NOT IN (SELECT seq FROM {held}) AND NOT EXISTS (SELECT 1 FROM (VALUES {listed})"  # noqa: S608 - numbers made here
        " AS r(lo, hi, f) WHERE cand.seq BETWEEN r.lo AND r.hi AND (r.f IS NULL OR cand.seq < r.f))"
    )


def rule_out(
    run: Callable[[str], list[Any]],
    folder: Path,
    files: Sequence[ArchiveFile],
    phrase: tuple[tuple[str, ...], bool],
) -> bool:
    """Delete from `cand` the candidates of `phrase` (its tokens, whether the last is a prefix) that these rows
    rule out, the field rows having confirmed none of those left; True when the files' rows could say. Reads
    each file's counts of its words, then the seqs of the phrase's pairs and UNSURE: no events file."""
    tokens, prefix = phrase
    if not can_rule_out(tokens):
        return False
    paths = {str(folder / tokens_name(a.name)): a for a in files}
    facts = run(facts_sql(list(paths), tokens, prefix))
    since = from_seqs(facts, [(p, a.rows) for p, a in paths.items()], tokens, prefix)
    usable = [p for p in paths if since[p] is not None]
    if not usable:
        return False
    run(f"CREATE OR REPLACE TEMP TABLE pair_held AS {held_sql(usable, tokens, prefix)}")
    try:
        run(rule_out_sql([(a.first_seq, a.last_seq, since[p]) for p, a in paths.items()], "pair_held"))
    finally:
        run("DROP TABLE IF EXISTS pair_held")
    return True
