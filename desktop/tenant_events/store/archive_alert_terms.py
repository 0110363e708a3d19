"""The alerts a filter's query names (`alert:ID`, the window's alert chip): their events are read from the live
database, which keeps each alert's events, so a filter over both tiers names them by seq in the archive too."""

from __future__ import annotations

import sqlite3

from tenant_events.query import And, Kind, Node, Not, Or, Term, parse
from tenant_events.query.fields import field_named
from tenant_events.store.query import NO_FILTER
from tenant_events.values.events import EventFilter


def alert_ids(f: EventFilter) -> list[int]:
    """The alerts a filter's query names (their events are read from the live database)."""
    if f == NO_FILTER or not f.query.strip():
        return []
    found: list[int] = []

    def walk(node: Node) -> None:
        if isinstance(node, Term):
            field = field_named(node.field)
            if field is not None and field.kind is Kind.ALERT:
                found.append(int(node.value))
        elif isinstance(node, Not):
            walk(node.child)
        elif isinstance(node, And | Or):
            for child in node.children:
                walk(child)

    node = parse(f.query)
    if node is not None:
        walk(node)
    return found


def alerts_named(conn: sqlite3.Connection, f: EventFilter) -> dict[int, tuple[int, ...]]:
    """The events of each alert `f` names, from the live database (call inside the reader's snapshot)."""
    out = {}
    for alert_id in alert_ids(f):
        rows = conn.execute("SELECT seq FROM alert_events WHERE alert_id = ?", (alert_id,))
        out[alert_id] = tuple(int(r[0]) for r in rows)
    return out
