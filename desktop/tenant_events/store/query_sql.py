"""Compiles the query line (tenant_events.query) into parametrised SQL over `events`.

    Text        the free-text search of query.py: FTS5 for rows the indexer has reached (seq <= fts_upto), LIKE
                for the tail after them
    Term type   `type IN (…)`: the names a wildcard matches (the (type, seq) index serves it)
    Term alert  `seq IN` the alert's rows in `alert_events` (the same database holds both)
    Term text   the field's column or JSON values (fields.py), lower-cased, by GLOB: the value at the start of a
                word (`user:ada` finds "Ada Lovelace" and "ada@example.com", not "Canada"), or with `*` a
                wildcard over the whole value. Wrapped so a missing field is false, never NULL: `-org:acme`
                keeps the user events, which have no organization
    Not/And/Or  NOT/AND/OR of the children

Values, patterns and JSON paths are bound as parameters; only fixed SQL and the column names of fields.py are
spliced in. Reading JSON is the cost, so a field term first checks that its value's text occurs in the stored
JSON at all (LIKE), and the FTS index narrows it: the tokens of an ASCII value, as an FTS phrase with a prefix
on the last one, find every row whose field has the value at a word start (and a few more, which the GLOB then
drops). The newest-first walk in reader.py drives on that; counts use it as an `IN` set.
"""

from __future__ import annotations

import re
import string
from typing import Final

from tenant_events.query import And, Kind, Node, Not, Or, Term, Text, parse
from tenant_events.query.fields import TYPE_NAMES, JsonPath, families_matching, field_named, types_matching

Sql = tuple[str, list[object]]
_LOWER: Final = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)  # SQLite's lower(): ASCII only
_NOT_WORD: Final = "[^a-z0-9\u0080-\U0010ffff]"  # a character the FTS tokenizer splits words on
_TOKEN: Final = re.compile(r"[A-Za-z0-9]+")
_LIKE_COLUMNS: Final = ("event_id", "summary", "raw")
_SHORT_PREFIX: Final = 2
# What JSON encoders write as escapes: quotes and backslashes always, `/` (PHP), HTML's `<>&` (Go, Rails), `'`,
# `+` and a backquote as well (.NET's default encoder), `=` and `'` (Gson), besides everything not printable ASCII.
_UNESCAPED_RUN: Final = re.compile(r"[^\"\\/<>&'+`=\x00-\x1f\x7f-\U0010ffff]{2,}")


def like_pattern(term: str) -> str:
    """`%term%` with LIKE's wildcards escaped (ESCAPE '\\')."""
    return "%" + term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def text_like(value: str) -> Sql:
    """Free text in rows the FTS index has not reached: the id, summary or raw JSON contains it (any case), or
    a raw JSON with escapes (a backslash) holds every part of it an encoder writes as it is (unescaped_runs:
    `O\\u0027Brien` for "o'brien"), as the index will find it once it holds the row (fts_text.py)."""
    cond = " OR ".join(f"{c} LIKE ? ESCAPE '\\'" for c in _LIKE_COLUMNS)
    params: list[object] = [like_pattern(value)] * len(_LIKE_COLUMNS)
    runs = unescaped_runs(value)
    if runs and runs != [value]:
        cond += " OR (instr(raw, '\\') > 0" + " AND raw LIKE ? ESCAPE '\\'" * len(runs) + ")"
        params += [like_pattern(run) for run in runs]
    return f"({cond}) IS 1", params


def text_match(node: Text) -> str:
    """The FTS5 expression of free text: a quoted phrase (sqlite.org/fts5.html §3.1), a prefix for a word."""
    return '"' + node.value.replace('"', '""') + ('"' if node.phrase else '"*')


def fts_seqs(match: str, upto: int, tail: Sql | None) -> Sql:
    """`seq IN (…)`: the FTS hits up to `upto` and the tail rows after it that pass `tail` (all when None)."""
    cond, params = tail if tail is not None else ("1", [])
    # only placeholders are spliced in
    sql = f"seq IN (SELECT rowid FROM events_fts WHERE events_fts MATCH ? UNION ALL SELECT seq FROM events WHERE seq > ? AND {cond})"  # noqa: S608
    return sql, [match, upto, *params]


def _glob_escape(text: str) -> str:
    return "".join(f"[{c}]" if c in "*?[" else c for c in text)


def value_patterns(term: Term) -> list[str]:
    """GLOB patterns over the lower-cased field value; any one matching is a match."""
    value = term.value.translate(_LOWER)
    if term.is_glob:
        return ["*".join(_glob_escape(part) for part in value.split("*"))]
    escaped = _glob_escape(value)
    if value[:1].isalnum():
        return [escaped + "*", f"*{_NOT_WORD}{escaped}*"]
    return [f"*{escaped}*"]


def term_superset(term: Term) -> str | None:
    """An FTS5 expression that finds every row `term` matches (and maybe more), or None when there is none."""
    field = field_named(term.field)
    if field is None or field.kind is not Kind.TEXT:
        return None
    literal = term.value.split("*", 1)[0] if term.is_glob else term.value
    tokens = _TOKEN.findall(literal) if literal.isascii() else []
    if len(tokens) > 1 and len(tokens[-1]) <= _SHORT_PREFIX:
        # A one- or two-character prefix makes FTS5 merge the doclists of every word it starts (222 ms for
        # `ip:203.0.113.7` at 1M rows, 0.6 ms without it); the words before it, a whole-word phrase, still
        # find every match.
        return '"' + " ".join(tokens[:-1]) + '"'
    return '"' + " ".join(tokens) + '"*' if tokens else None


def unescaped_runs(text: str) -> list[str]:
    """The parts of `text` any JSON encoder writes as they are: the runs between characters one may escape, of
    two characters or more. "o'brien" is in `O\\u0027Brien` as `brien`, not as `o'brien`."""
    return [run for run in _UNESCAPED_RUN.findall(text) if run.strip()]


def _raw_pieces(term: Term) -> list[str]:
    """Parts of the value that must appear as they are (any ASCII case) in the stored JSON text of a match:
    a cheap LIKE before the JSON is parsed (unescaped_runs)."""
    parts = term.value.split("*") if term.is_glob else [term.value]
    return [run for p in parts for run in unescaped_runs(p)]


def _types_in(names: tuple[str, ...], index: bool = True) -> Sql:
    """`type IN (…)`; without `index`, hidden from the planner (a unary +): a field's type guards must not make
    SQLite walk the type index for every event type the field lives in instead of the FTS superset's rows."""
    return f"{'' if index else '+'}type IN ({','.join('?' * len(names))})", list(names)


def _any_value(source: str, source_params: list[object], patterns: list[str]) -> Sql:
    glob = " OR ".join("lower(value) GLOB ?" for _ in patterns)
    return f"EXISTS (SELECT 1 FROM {source} WHERE {glob})", [*source_params, *patterns]  # noqa: S608


def _json_values(paths: list[JsonPath], patterns: list[str]) -> Sql:
    """Whether any of `paths` holds a matching value; the stored JSON is parsed once per row."""
    marks = ", ".join("?" * len(paths))
    values: list[object] = [p.path for p in paths]
    if len(paths) == 1:
        return _any_value("(SELECT json_extract(raw, ?) AS value)", values, patterns)
    return _any_value(f"json_each(json_extract(raw, {marks}))", values, patterns)


def term_condition(term: Term) -> Sql:
    field = field_named(term.field)
    if field is None:
        raise ValueError(f"unknown field {term.field!r}")  # parse() never makes one
    if field.kind is Kind.TYPE:
        return _types_in(types_matching(term.value))
    if field.kind is Kind.ALERT:
        return "seq IN (SELECT seq FROM alert_events WHERE alert_id = ?)", [int(term.value)]
    if field.kind is Kind.FAMILY:
        families = families_matching(term.value)
        return _types_in(tuple(t for t in TYPE_NAMES if t.split(".", 1)[0] in families))
    patterns = value_patterns(term)
    if field.column is not None:
        glob = " OR ".join(f"lower({field.column}) GLOB ?" for _ in patterns)
        return f"({glob}) IS 1", list(patterns)
    pieces = _raw_pieces(term)
    like = "".join("raw LIKE ? ESCAPE '\\' AND " for _ in pieces)
    groups: dict[tuple[str, ...] | None, list[JsonPath]] = {}
    for path in field.paths:
        groups.setdefault(path.types, []).append(path)
    parts: list[str] = []
    params: list[object] = []
    for types, paths in groups.items():
        values, values_params = _json_values(paths, patterns)
        if types is None:
            parts.append(values)
            params += values_params
        else:
            names = tuple(sorted({t for glob in types for t in types_matching(glob)}))
            where_types, type_params = _types_in(names, index=False)
            parts.append(f"({where_types} AND {values})")
            params += [*type_params, *values_params]
    return f"({like}(" + " OR ".join(parts) + "))", [*(like_pattern(p) for p in pieces), *params]


def condition(node: Node, upto: int, tail: bool = False, narrow: bool = False) -> Sql:
    """The SQL condition of `node`. `tail`: only for rows after `upto` (free text by LIKE, no FTS). `narrow`:
    field terms first check their FTS superset as an `IN` set (built once per statement), so most rows never
    have their JSON read, under NOT too: for whole-table counts, not for checking a page's few rows."""
    if isinstance(node, Text):
        like = text_like(node.value.replace("*", " ").strip() if not node.phrase else node.value)
        return like if tail else fts_seqs(text_match(node), upto, like)
    if isinstance(node, Term):
        superset = term_superset(node) if narrow and not tail else None
        if superset is None:
            return term_condition(node)
        seqs, seqs_params = fts_seqs(superset, upto, None)
        cond, params = term_condition(node)
        return f"({seqs} AND {cond})", [*seqs_params, *params]
    if isinstance(node, Not):
        inner, params = condition(node.child, upto, tail, narrow)
        return f"NOT ({inner})", params
    joiner = " AND " if isinstance(node, And) else " OR "
    parts = [condition(c, upto, tail, narrow) for c in node.children]
    return "(" + joiner.join(p[0] for p in parts) + ")", [x for p in parts for x in p[1]]


def conjuncts(node: Node) -> tuple[Node, ...]:
    return node.children if isinstance(node, And) else (node,)


def query_condition(query: str, upto: int, narrow: bool = True) -> Sql | None:
    """The query's condition over all rows (None for a blank query). `narrow` (for counts over the whole
    table): field terms and ORs of them first check their FTS superset as an `IN` set, so rows that cannot
    match never have their JSON read. Not for reading the newest rows: building a big set (`-email:example.com`:
    400k rows, ~0.3 s) costs more than checking rows until a page is full."""
    node = parse(query)
    if node is None:
        return None
    parts: list[Sql] = []
    for item in conjuncts(node):
        drive = _drive(item) if narrow else None
        if drive is not None and not drive[1] and not isinstance(item, Term):
            parts.append(fts_seqs(drive[0], upto, None))
        parts.append(condition(item, upto, narrow=narrow))
    return _and(parts)


def tail_condition(query: str) -> Sql | None:
    """The query's condition for rows after the FTS index's reach (no FTS)."""
    node = parse(query)
    return None if node is None else condition(node, 0, tail=True)


def _drive(node: Node) -> tuple[str, bool] | None:
    """(FTS5 expression every match of `node` satisfies, whether it is exactly `node`), or None."""
    if isinstance(node, Text):
        return text_match(node), True
    if isinstance(node, Term):
        superset = term_superset(node)
        return None if superset is None else (superset, False)
    if isinstance(node, Not):
        return None
    drives = [_drive(c) for c in node.children]
    if isinstance(node, Or):
        if any(d is None for d in drives):
            return None
        found = [d for d in drives if d is not None]
        return "(" + " OR ".join(d[0] for d in found) + ")", all(d[1] for d in found)
    found = [d for d in drives if d is not None]
    if not found:
        return None
    return "(" + " AND ".join(d[0] for d in found) + ")", len(found) == len(drives) and all(
        d[1] for d in found
    )


def walk_parts(query: str, upto: int) -> tuple[str | None, Sql | None]:
    """For a newest-first walk of the FTS index: the MATCH expression (None: the query gives none) and the
    condition left to check on each hit (None: the MATCH settles it all)."""
    node = parse(query)
    if node is None:
        return None, None
    matches: list[str] = []
    rest: list[Sql] = []
    for item in conjuncts(node):
        drive = _drive(item)
        if drive is not None:
            matches.append(drive[0])
        if drive is None or not drive[1]:
            rest.append(condition(item, upto))
    return (" AND ".join(matches) or None), (_and(rest) if rest else None)


def free_text_only(query: str) -> list[Text] | None:
    """The words and phrases of a query that is nothing else (counted in the FTS index itself), or None."""
    node = parse(query)
    if node is None:
        return None
    items = conjuncts(node)
    return [i for i in items if isinstance(i, Text)] if all(isinstance(i, Text) for i in items) else None


def _and(parts: list[Sql]) -> Sql:
    return " AND ".join(p[0] for p in parts), [x for p in parts for x in p[1]]
