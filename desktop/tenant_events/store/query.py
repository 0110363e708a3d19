"""Turns an `EventFilter` into a parametrised SQL WHERE clause over `events` (no string-built values).

Text search uses FTS5 over id, summary and the raw JSON for rows already indexed, and a LIKE scan for the
short tail the indexer has not reached yet (writer.py), so new events are found at once.
"""

from __future__ import annotations

import re
from datetime import UTC
from typing import Final

from tenant_events.store.records import EventFilter

_TERM: Final = re.compile(r"\S+")


def fts_query(text: str) -> str | None:
    """An FTS5 MATCH expression: every whitespace-separated term as a quoted prefix phrase, ANDed.

    Quoting makes FTS5 syntax in user text (`"`, `*`, `:`, `AND`, `-`…) plain search text
    (sqlite.org/fts5.html §3.1: a string is a phrase; `""` escapes a quote).
    """
    terms = ['"' + t.replace('"', '""') + '"*' for t in _TERM.findall(text)]
    return " AND ".join(terms) if terms else None


def like_pattern(term: str) -> str:
    """`%term%` with LIKE's wildcards escaped (ESCAPE '\\')."""
    return "%" + term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def where_clause(f: EventFilter, fts_upto: int) -> tuple[str, list[object]]:
    """SQL condition (without WHERE) and its parameters; `fts_upto` is the last seq the FTS index covers."""
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
