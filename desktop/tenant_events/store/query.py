"""Turns an `EventFilter` into a parametrised SQL WHERE clause over `events` (no string-built values).

Text search uses FTS5 over id, summary and the raw JSON for rows already indexed, and a LIKE scan for the
short tail the indexer has not reached yet (writer.py), so new events are found at once. The query line
(`EventFilter.query`) compiles in query_sql.py and is ANDed with the rest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import UTC
from typing import Final

from tenant_events.store.query_sql import (
    Sql,
    condition,
    free_text_only,
    like_pattern,
    query_condition,
    tail_condition,
    text_match,
    walk_parts,
)
from tenant_events.values.events import EventFilter

__all__ = ["Walk", "fts_query", "like_pattern", "text_parts", "text_seqs", "walk_plan", "where_clause"]

_TERM: Final = re.compile(r"\S+")
NO_FILTER: Final = EventFilter()


def fts_query(text: str) -> str | None:
    """An FTS5 MATCH expression: every whitespace-separated term as a quoted prefix phrase, ANDed.

    Quoting makes FTS5 syntax in user text (`"`, `*`, `:`, `AND`, `-`…) plain search text
    (sqlite.org/fts5.html §3.1: a string is a phrase; `""` escapes a quote).
    """
    terms = ['"' + t.replace('"', '""') + '"*' for t in _TERM.findall(text)]
    return " AND ".join(terms) if terms else None


def where_clause(f: EventFilter, fts_upto: int, narrow: bool = True) -> tuple[str, list[object]]:
    """SQL condition (without WHERE) and its parameters; `fts_upto` is the last seq the FTS index covers.
    `narrow`: for whole-table counts (see query_sql.query_condition); False for reading a page of rows."""
    parts: list[str] = []
    params: list[object] = []
    if f.types:
        parts.append(f"type IN ({','.join('?' * len(f.types))})")
        params.extend(sorted(f.types))
    if f.since is not None:
        parts.append("time_ms >= ?")
        params.append(int(f.since.astimezone(UTC).timestamp() * 1000))
    if f.until is not None:
        parts.append("time_ms < ?")
        params.append(int(f.until.astimezone(UTC).timestamp() * 1000))
    if not f.include_test:
        parts.append("purpose IS NOT 'test'")
    if f.tenant:
        parts.append("tenant = ?")
        params.append(f.tenant)
    text = text_seqs(f.text, fts_upto)
    if text is not None:
        # One IN over a UNION ALL, not `IN (fts) OR (tail)`: an OR made SQLite walk the whole table for a
        # rare term (an event id: ~1 s at 1M rows); the IN list is an ordered set that drives the lookups.
        parts.append(f"seq IN ({text[0]})")
        params.extend(text[1])
    query = query_condition(f.query, fts_upto, narrow)
    if query is not None:
        parts.append(query[0])
        params.extend(query[1])
    return (" AND ".join(parts) or "1"), params


def text_parts(text: str) -> tuple[str, str, list[object]]:
    """For non-blank `text`: the FTS5 MATCH expression, and the LIKE condition (with its parameters) that finds
    the same rows in the tail the indexer has not reached yet."""
    match = fts_query(text)
    if match is None:
        raise ValueError(f"no search terms in {text!r}")
    terms = _TERM.findall(text)
    tail = " AND ".join(
        "(event_id LIKE ? ESCAPE '\\' OR summary LIKE ? ESCAPE '\\' OR raw LIKE ? ESCAPE '\\')" for _ in terms
    )
    return match, tail, [p for t in terms for p in [like_pattern(t)] * 3]


def text_seqs(text: str, fts_upto: int) -> tuple[str, list[object]] | None:
    """A SELECT of the seqs matching the free text (None when there is none): the FTS index up to
    `fts_upto`, plus a LIKE scan bounded by primary key to the tail the indexer has not reached yet."""
    if fts_query(text) is None:
        return None
    match, tail, tail_params = text_parts(text)
    # only placeholders are spliced in
    sql = f"SELECT rowid AS seq FROM events_fts WHERE events_fts MATCH ? UNION ALL SELECT seq FROM events WHERE seq > ? AND {tail}"  # noqa: S608
    return sql, [match, fts_upto, *tail_params]


@dataclass(frozen=True)
class Walk:
    """How to list a filter's rows by walking the FTS index in seq order instead of building the set of all
    matches: hits of `match` joined to their rows and checked with `rest`; rows after the index's reach
    (the tail) checked with `tail`."""

    match: str
    rest: Sql
    tail: Sql


def walk_plan(f: EventFilter, fts_upto: int) -> Walk | None:
    """The walk for `f`, or None when neither its text nor its query gives an FTS expression to drive on."""
    base = where_clause(replace(f, text="", query=""), fts_upto, narrow=False)
    matches: list[str] = []
    rest, tail = [base], [base]
    if fts_query(f.text) is not None:
        match, like, like_params = text_parts(f.text)
        matches.append(match)
        tail.append((like, like_params))
    if f.query.strip():
        query_match, query_rest = walk_parts(f.query, fts_upto)
        if query_match is not None:
            matches.append(query_match)
        if query_rest is not None:
            rest.append(query_rest)
        tail.append(tail_condition(f.query) or ("1", []))
    if not matches:
        return None
    return Walk(" AND ".join(f"({m})" for m in matches), _and(rest), _and(tail))


def fts_count_parts(f: EventFilter) -> tuple[str, Sql] | None:
    """For a filter of free text only: the MATCH expression and the tail's condition, so a count can run in the
    FTS index itself; None for any other filter."""
    if replace(f, text="", query="") != NO_FILTER:
        return None
    matches: list[str] = []
    tail: list[Sql] = []
    if fts_query(f.text) is not None:
        match, like, like_params = text_parts(f.text)
        matches.append(match)
        tail.append((like, like_params))
    if f.query.strip():
        words = free_text_only(f.query)
        if words is None:
            return None
        matches += [text_match(w) for w in words]
        tail += [condition(w, 0, tail=True) for w in words]
    if not matches:
        return None
    return " AND ".join(f"({m})" for m in matches), _and(tail)


def _and(parts: list[Sql]) -> Sql:
    return " AND ".join(f"({p[0]})" for p in parts), [x for p in parts for x in p[1]]
