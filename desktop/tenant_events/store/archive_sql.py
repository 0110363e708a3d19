"""Compiles an `EventFilter` into DuckDB SQL over archive files, with the live tier's meaning (query.py, query_sql.py).

The relations are `ev` (the events files) and `tok` (their token files, archive_layout.py). Every part answers
exactly what the live tier's SQL answers for the same events:

  free text     FTS5's phrase match: the phrase's tokens (made by FTS5 itself, `phrase_tokens`) found in the
                token files, the last one as a prefix unless quoted; a phrase of several tokens is then checked
                in order on each column's text, case and accents folded as the tokenizer folds them
  type, family  `type IN (…)`
  alert         `seq IN (…)` the alert's events, read from the live database in the reader's snapshot
  field terms   the live tier's GLOB patterns (query_sql.value_patterns) as regular expressions over the
                event's precomputed values of that field (already lower-cased like SQLite's lower()); a column
                field folds ASCII case in the expression instead. The live tier's substring check on the stored
                JSON (`raw LIKE`, a cheap test before parsing) is implied by a value's match and left out

Each top-level conjunct that implies a set of tokens also gives a `drive`: that set as a cheap `seq IN` filter
the reader applies first, so the per-row checks only see rows that can match (docs/archive.md "Queries").
"""

from __future__ import annotations

import functools
import re
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC
from typing import Final

from tenant_events.query import And, Kind, Node, Not, Or, Term, Text, parse
from tenant_events.query.fields import TYPE_NAMES, families_matching, field_named, types_matching
from tenant_events.store.archive_build import FTS_TOKENIZER
from tenant_events.store.archive_fields import lookup_prefixes, spelled_prefix
from tenant_events.store.archive_terms import lookup_query, phrase_rows_query
from tenant_events.store.duck import literal
from tenant_events.store.fts_text import DECODED_RAW_SQL
from tenant_events.store.query_sql import value_patterns
from tenant_events.values.events import EventFilter

_TERM: Final = re.compile(r"\S+")
# a character FTS5's unicode61 tokenizer splits on (letters and digits make tokens)
_SEP: Final = r"[^\pL\pN]"
_TEXT_COLUMNS: Final = ("event_id", "summary", "raw")
# each column's text as the tokens were made of it: the raw JSON with its escapes decoded (fts_text.py)
_TEXT_OF: Final = {"event_id": "event_id", "summary": "summary", "raw": DECODED_RAW_SQL}
# a phrase's drive meets every token held by at most this many times its rarest's events
_NEAR_RAREST: Final = 8


@functools.lru_cache(maxsize=512)
def phrase_tokens(text: str) -> tuple[str, ...]:
    """The tokens FTS5 makes of `text`, in order (the same tokenizer as the live index)."""
    mem = sqlite3.connect(":memory:")
    try:
        mem.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{FTS_TOKENIZER}')")
        mem.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        mem.execute("INSERT INTO t (rowid, x) VALUES (1, ?)", (text,))
        return tuple(str(r[0]) for r in mem.execute("SELECT term FROM v ORDER BY offset"))
    finally:
        mem.close()


def _regex_char(c: str) -> str:
    if c.isascii() and not c.isalnum():
        return "\\" + c if c not in "\x00\n\t\r" else f"\\x{{{ord(c):02x}}}"
    return c


def _class_char(c: str) -> str:
    return f"\\x{{{ord(c):x}}}" if not c.isalnum() or not c.isascii() else c


def glob_regex(pattern: str, fold_ascii: bool = False) -> str:
    """SQLite's GLOB (`*`, `?`, `[…]` with `^` and ranges) as an RE2 full-match expression. `fold_ascii`: the
    value is matched as SQLite's lower() would leave it (ASCII letters folded), the pattern being lower-case.
    GLOB reads the value up to a NUL: what it holds from one on is left (a query holds none, parser.py)."""
    out, i, n = ["(?s)"], 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            out.append("[^\\x00]*")
        elif c == "?":
            out.append("[^\\x00]")
        elif c == "[":
            j, negate, members = i + 1, False, []
            if j < n and pattern[j] == "^":
                negate, j = True, j + 1
            if j < n and pattern[j] == "]":
                members.append(("]", "]"))
                j += 1
            while j < n and pattern[j] != "]":
                if j + 2 < n and pattern[j + 1] == "-" and pattern[j + 2] != "]":
                    members.append((pattern[j], pattern[j + 2]))
                    j += 3
                else:
                    members.append((pattern[j], pattern[j]))
                    j += 1
            if j >= n:
                return "(?!)"  # SQLite: an unclosed set matches nothing
            if fold_ascii:
                members += [(lo.upper(), hi.upper()) for lo, hi in members if "a" <= lo <= hi <= "z"]
            body = "".join(
                _class_char(lo) + ("" if lo == hi else "-" + _class_char(hi)) for lo, hi in members
            )
            out.append(f"[^\\x00{body}]" if negate else f"[{body}]")
            i = j
        elif fold_ascii and "a" <= c <= "z":
            out.append(f"[{c}{c.upper()}]")
        else:
            out.append(_regex_char(c))
        i += 1
    return "".join(out) + "(?:\\x00.*)?"


def _types_in(names: tuple[str, ...]) -> str:
    return f"type IN ({', '.join(literal(t) for t in names)})" if names else "false"


@dataclass(frozen=True)
class Compiled:
    """`lookup`: one query of (k, seq) pairs, the events holding the filter's k-th token (the reader keeps it as
    the temporary table `sets`, computed once); `drive`: a query of seqs every match lies in (None: no such
    set), built from it; `where`: the exact condition for rows in the drive (top-level phrases only check
    their tokens' order there: the drive holds their tokens)."""

    lookup: str | None
    drive: str | None
    where: str
    # top-level phrases' order checks left out of `where` (`apart` only): each (on the event id and summary, on
    # the raw JSON), a row passing either passes it; checked by themselves first, the raw JSON is read only for
    # the candidates the small columns did not settle (an event id: none)
    orders: tuple[tuple[str, str], ...] = ()
    tokens: tuple[tuple[str, bool], ...] = ()  # the tokens `lookup` reads (prefix or whole)
    whole: bool = False  # `where` is the whole filter by itself (no top-level free text left to the drive)
    listed: int | None = None  # seqs the files list for `tokens`, when counted to choose them (None: not)
    # for each phrase of `orders`, a query over `tok` of the terms of the field rows that hold it in order
    # (archive_terms.phrase_rows_query): the events in every one's rows need no order check
    sure: tuple[str, ...] = ()
    # for each phrase of `orders`: its tokens, and whether the last is a prefix (archive_pairs.py rules out some)
    phrases: tuple[tuple[tuple[str, ...], bool], ...] = ()

    def exact(self) -> str:
        """`where` with the order checks."""
        return " AND ".join([self.where, *(f"({a} OR {b})" for a, b in self.orders)])


class FilterCompiler:
    """One filter's SQL; `alert_seqs` holds the events of each alert the query names (from the live tier)."""

    def __init__(
        self,
        alert_seqs: Mapping[int, tuple[int, ...]] | None = None,
        counts: Mapping[tuple[str, bool], int] | None = None,
        words: bool = False,
    ) -> None:
        """`counts`: how many events hold each token the filter names (`wanted` of a first compile); with them
        a phrase's drive is its rarest token alone (a set of every event holding it, which holds the phrase's
        matches too), not the meeting of every token's set ('evt' is in every event id). `words`: every file
        read holds its field rows (archive_fields.py), which answer a field term whose value starts with a letter or
        digit exactly."""
        self.alert_seqs = alert_seqs or {}
        self.words = words
        self.worded = False  # a field term the field rows could answer (a first compile: are they there?)
        self.confirmable = False  # a phrase they could confirm (for a count: are they there?)
        self.scanned = False  # a field term checked on its values' column
        self.counts = counts
        self.wanted: set[tuple[str, bool]] = set()
        self.choosing = False  # a phrase's drive could take one of several tokens: `counts` would choose
        self._sets: dict[tuple[str, bool], str] = {}

    def _token_set(self, token: str, prefix: bool) -> str:
        """The seqs of `token` (a query), looked up once however often the filter uses it."""
        k = self._sets.setdefault((token, prefix), str(len(self._sets)))
        return f"SELECT seq FROM sets WHERE k = {k}"  # noqa: S608 - a number made here

    def _phrase_sets(self, text: str, prefix: bool) -> list[str] | None:
        tokens = phrase_tokens(text)
        if not tokens:
            return None
        return [self._token_set(t, prefix and k == len(tokens) - 1) for k, t in enumerate(tokens)]

    def _phrase_drive(self, text: str, prefix: bool, near: bool = False) -> list[str] | None:
        """The sets a phrase's drive meets: all its tokens', or with `counts` the rarest token's (`near`: and
        those nearly as rare; not 'evt', which every event id holds)."""
        tokens = phrase_tokens(text)
        if not tokens:
            return None
        keys = [(t, prefix and k == len(tokens) - 1) for k, t in enumerate(tokens)]
        self.wanted.update(keys)
        self.choosing = self.choosing or len(set(keys)) > 1
        if self.counts is None:
            return [self._token_set(*key) for key in keys]
        counts = self.counts
        rarest = min(keys, key=lambda key: counts.get(key, 0))
        if not near:
            return [self._token_set(*rarest)]
        # free text's order is checked on the raw JSON: with the tokens nearly as rare, "ada lovelace" leaves
        # out the Radia Lovelaces at little cost (a field's value is checked on its own column: rarest alone)
        bound = counts.get(rarest, 0) * _NEAR_RAREST
        kept = [key for key in dict.fromkeys(keys) if key == rarest or counts.get(key, 0) <= bound]
        return [self._token_set(*key) for key in kept]

    def _order(self, text: str, prefix: bool, columns: tuple[str, ...] = _TEXT_COLUMNS) -> str | None:
        """The check that a phrase's tokens all stand, in order, in one of `columns` (None for a single token)."""
        tokens = phrase_tokens(text)
        if len(tokens) < 2:
            return None
        rx = "(^|" + _SEP + ")" + (_SEP + "+").join(re.escape(t) for t in tokens)
        rx += "" if prefix else "($|" + _SEP + ")"
        return (
            "("
            + " OR ".join(
                f"regexp_matches(strip_accents(lower({_TEXT_OF[c]})), {literal(rx)})" for c in columns
            )
            + ")"
        )

    def phrase(self, text: str, prefix: bool) -> str:
        """The exact condition of an FTS5 phrase: its tokens' sets, then their order when there are several."""
        sets = self._phrase_sets(text, prefix)
        if sets is None:
            return "false"
        member = " AND ".join(f"seq IN ({q})" for q in sets)
        order = self._order(text, prefix)
        return member if order is None else f"({member} AND {order})"

    def term(self, term: Term) -> str:
        field = field_named(term.field)
        if field is None:
            raise ValueError(f"unknown field {term.field!r}")
        if field.kind is Kind.TYPE:
            return _types_in(types_matching(term.value))
        if field.kind is Kind.FAMILY:
            families = families_matching(term.value)
            return _types_in(tuple(t for t in TYPE_NAMES if t.split(".", 1)[0] in families))
        if field.kind is Kind.ALERT:
            seqs = self.alert_seqs.get(int(term.value), ())
            return f"seq IN ({', '.join(str(int(s)) for s in seqs)})" if seqs else "false"
        if self._words(term) is not None:  # met with its full-text superset, as the live tier's (a NOT's too)
            return f"seq IN ({self.drive(term)})"
        self.scanned = True
        patterns = value_patterns(term)
        if field.column is not None:
            tests = " OR ".join(
                f"regexp_full_match({field.column}, {literal(glob_regex(p, True))})" for p in patterns
            )
            return f"coalesce({tests}, false)"
        # No substring check on the stored JSON: the live tier's (`raw LIKE`) only spares it parsing JSON, and
        # a value matching here holds those ASCII pieces as the JSON spells them. Reading `raw` cost 10x the
        # values' own column (842 of the 990 bytes an event takes before compression).
        tests = " OR ".join(f"regexp_full_match(v, {literal(glob_regex(p))})" for p in patterns)
        return f"(len(list_filter(f_{field.name}, v -> {tests})) > 0)"

    def _token_sets(self, keys: list[tuple[str, bool]]) -> str:
        """The seqs of any of `keys` (each looked up once, as _token_set)."""
        ks = [self._sets.setdefault(key, str(len(self._sets))) for key in keys]
        return f"SELECT seq FROM sets WHERE k IN ({', '.join(ks)})"  # noqa: S608 - numbers made here

    def _words(self, term: Term) -> tuple[list[tuple[str, bool]], list[tuple[str, bool]]] | None:
        """The keys of a field term's rows in the files (together exactly the events whose values it matches):
        those whose JSON holds the value as it is, and the others (archive_fields.SPELLED) unless `counts` say
        the files list none; None when the files lack the rows or they cannot answer the term."""
        prefixes = lookup_prefixes(term)
        self.worded = self.worded or prefixes is not None
        if prefixes is None or not self.words:
            return None
        plain = [(prefix, True) for prefix in prefixes]
        spelled = [(spelled_prefix(prefix), True) for prefix in prefixes]
        self.wanted.update(
            plain + spelled
        )  # counted with the tokens: how many the lookup lists, whether any is spelled
        self.choosing = True
        if self.counts is not None:
            counts = self.counts
            spelled = [key for key in spelled if counts.get(key, 0)]
        return plain, spelled

    def _word_drive(
        self, words: tuple[list[tuple[str, bool]], list[tuple[str, bool]]], phrase: str | None, prefix: bool
    ) -> str:
        """A field term's matches from its rows (`_words`). The live tier's match holds its full-text superset's
        tokens too (its index reads the JSON as spelled): an event whose JSON holds the value as it is holds
        them, the others are met with the superset, read only when the files list such an event."""
        plain = self._token_sets(words[0])
        if not words[1]:
            return plain
        spelled = self._token_sets(words[1])
        sets = self._phrase_drive(phrase, prefix) if phrase else None
        # UNION ALL: every use asks only whether a seq is in it; a UNION hashed them all (1.4 s over a year)
        either = f"({' INTERSECT '.join([spelled, *sets])})" if sets else spelled
        return f"{plain} UNION ALL {either}"

    def _exact(self, node: Node) -> bool:
        """Whether `node`'s drive is exactly its matches: a field term the files' rows answer, or an OR of such
        (`ip:203.0.113.7 OR ip:203.0.113.25`: its sides' matches, united)."""
        if isinstance(node, Term):
            return self.words and lookup_prefixes(node) is not None
        return isinstance(node, Or) and all(self._exact(c) for c in node.children)

    def node(self, node: Node) -> str:
        if isinstance(node, Text):
            return self.phrase(node.value, not node.phrase)
        if isinstance(node, Term):
            return self.term(node)
        if isinstance(node, Not):
            return f"NOT ({self.node(node.child)})"
        joiner = " AND " if isinstance(node, And) else " OR "
        return "(" + joiner.join(self.node(c) for c in node.children) + ")"

    def drive(self, node: Node) -> str | None:
        """A query of seqs every match of `node` lies in, or None (as query_sql._drive), as set algebra."""
        if isinstance(node, Text):
            sets = self._phrase_drive(node.value, not node.phrase, near=True)
            return " INTERSECT ".join(sets) if sets else "SELECT NULL::BIGINT AS seq WHERE false"
        if isinstance(node, Term):
            from tenant_events.store.query_sql import term_superset

            superset = term_superset(node)
            phrase = superset.strip('"*').replace('" "', " ") if superset is not None else None
            words = self._words(node)
            if words is not None:
                return self._word_drive(words, phrase, superset is not None and superset.endswith("*"))
            sets = self._phrase_drive(phrase, superset.endswith("*")) if phrase and superset else None
            return " INTERSECT ".join(sets) if sets else None
        if isinstance(node, Not):
            return None
        drives = [self.drive(c) for c in node.children]
        if isinstance(node, Or):
            if any(d is None for d in drives):
                return None
            return " UNION ALL ".join(f"({d})" for d in drives if d is not None)  # as `_word_drive`
        found = [d for d in drives if d is not None]
        return " INTERSECT ".join(f"({d})" for d in found) if found else None

    def compile(
        self, f: EventFilter, low: int | None = None, high: int | None = None, apart: bool = False
    ) -> Compiled:
        """The filter with `low <= seq <= high` (either bound optional); `apart`: top-level phrases' order checks
        in `orders`, not in `where`."""
        parts: list[str] = []
        orders: list[tuple[str, str]] = []
        confirmed: list[str | None] = []
        phrases: list[tuple[tuple[str, ...], bool]] = []
        drives: list[str] = []
        implied = False
        if low is not None:
            parts.append(f"seq >= {int(low)}")
        if high is not None:
            parts.append(f"seq <= {int(high)}")
        if f.types:
            parts.append(_types_in(tuple(sorted(f.types))))
        if f.since is not None:
            parts.append(f"time_ms >= {int(f.since.astimezone(UTC).timestamp() * 1000)}")
        if f.until is not None:
            parts.append(f"time_ms < {int(f.until.astimezone(UTC).timestamp() * 1000)}")
        if not f.include_test:
            parts.append("purpose IS DISTINCT FROM 'test'")
        if f.tenant:
            parts.append(f"tenant = {literal(f.tenant)}")
        texts = [Text(word) for word in _TERM.findall(f.text)]
        node = parse(f.query) if f.query.strip() else None
        items = [*texts, *((node.children if isinstance(node, And) else (node,)) if node is not None else ())]
        for item in items:
            drive = self.drive(item)
            if drive is not None:
                drives.append(drive)
            if isinstance(item, Text):  # in the drive: only its tokens' order is left to check
                order = self._order(item.value, not item.phrase)
                if not phrase_tokens(item.value):
                    parts.append("false")
                elif order is not None and apart:
                    small = self._order(item.value, not item.phrase, _TEXT_COLUMNS[:-1])
                    big = self._order(item.value, not item.phrase, _TEXT_COLUMNS[-1:])
                    orders.append((str(small), str(big)))
                    phrases.append((phrase_tokens(item.value), not item.phrase))
                    rows = phrase_rows_query(phrase_tokens(item.value), not item.phrase)
                    self.confirmable = self.confirmable or rows is not None
                    confirmed.append(rows if self.words else None)
                elif order is not None:
                    parts.append(order)
            elif self._exact(item):
                # its drive's seqs are its matches (they meet its rows'), and the reader keeps every row to the
                # drive: checked again, every row of a file would probe the sets
                implied = True
            else:
                parts.append(self.node(item))
        lookup = None
        if self._sets:
            lookup = lookup_query(self._sets)
        drive = " INTERSECT ".join(f"({d})" for d in drives) if drives else None
        listed = None
        if self.counts is not None and all(key in self.counts for key in self._sets):
            listed = sum(self.counts[key] for key in self._sets)
        whole = not implied and not any(isinstance(item, Text) for item in items)
        where = " AND ".join(parts) or "true"
        sure = tuple(q for q in confirmed if q is not None)
        sure, keys = sure if len(sure) == len(confirmed) else (), tuple(self._sets)
        return Compiled(lookup, drive, where, tuple(orders), keys, whole, listed, sure, tuple(phrases))
