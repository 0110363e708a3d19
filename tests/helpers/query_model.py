"""A plain-Python statement of what a query matches, to check the store's SQL against (tests only).

Written from the rules, not from the SQL: free text is an FTS5 prefix (a word) or exact (a phrase) run of
tokens in one of the id, summary or raw JSON; a field term is the value at a word start of any of the field's
values (or a whole-value `*` wildcard), case-insensitive for ASCII.
"""

from __future__ import annotations

import functools
import re
import string
from typing import Any

import orjson

from tenant_events.query import FIELDS, And, Kind, Node, Not, Or, Term, Text
from tenant_events.store import Batch, EventRow, StoreWriter
from tenant_events.wire import EventMessage, decode_frame

_FIELDS = {f.name: f for f in FIELDS}
_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def tokens(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.lower())


@functools.lru_cache(maxsize=8192)
def _column_tokens(text: str) -> str:
    """A stored column's tokens, each between single spaces (a token holds no space): a run of tokens is then
    a substring. Cached: the same events' columns are asked about by query after query."""
    return " " + " ".join(tokens(text)) + " "


@functools.lru_cache(maxsize=1024)
def _glob_rx(pattern: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(p) for p in pattern.split("*")), re.DOTALL)


def _glob(pattern: str, value: str) -> bool:
    return _glob_rx(pattern).fullmatch(value) is not None


def _text_matches(node: Text, columns: list[str]) -> bool:
    """The query's tokens as a run of a column's tokens: each whole, the last a prefix (a word) or whole (a
    phrase)."""
    want = tokens(node.value)
    assert want, "free text without a token"
    run = " " + " ".join(want) + (" " if node.phrase else "")
    return any(run in _column_tokens(column) for column in columns)


def _value_matches(term: Term, value: str) -> bool:
    value, want = value.translate(_LOWER), term.value.translate(_LOWER)
    if term.is_glob:
        return _glob(want, value)
    if want[:1].isalnum():
        return re.search(r"(?:^|[^a-z0-9\u0080-\U0010ffff])" + re.escape(want), value) is not None
    return want in value


def _at(data: Any, path: str) -> Any:
    for key in path.removeprefix("$.").split("."):
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _term_values(term: Term, ev: dict[str, Any]) -> list[str]:
    field = _FIELDS[term.field]
    if field.column is not None:
        value = ev[field.column]
        return [] if value is None else [str(value)]
    out = []
    for path in field.paths:
        if path.types is None or any(_glob(g, ev["type"]) for g in path.types):
            value = _at(ev["message"], path.path)
            if isinstance(value, str | int | float) and not isinstance(value, bool):
                out.append(str(value))
    return out


def matches(node: Node, ev: dict[str, Any]) -> bool:
    """Whether the stored event `ev` (a dict of its columns plus the parsed `message`) matches `node`."""
    if isinstance(node, Text):
        return _text_matches(node, [ev["event_id"], ev["summary"] or "", ev["raw"]])
    if isinstance(node, Term):
        field = _FIELDS[node.field]
        if field.kind is Kind.TYPE:
            return _glob(node.value.lower(), ev["type"])
        if field.kind is Kind.FAMILY:
            return _glob(node.value.lower(), ev["type"].split(".", 1)[0])
        return any(_value_matches(node, v) for v in _term_values(node, ev))
    if isinstance(node, Not):
        return not matches(node.child, ev)
    if isinstance(node, And):
        return all(matches(c, ev) for c in node.children)
    assert isinstance(node, Or)
    return any(matches(c, ev) for c in node.children)


def simulated_rows(n: int, seed: int = 5) -> list[EventRow]:
    """`n` events with the simulator's payloads (every type, consistent users, organizations and groups); every
    9th is a test event."""
    import random
    from datetime import UTC, datetime

    from helpers.events_factory import event_id
    from tenant_events.simulator.generator import TenantLife

    life, rng = TenantLife(seed, "ten_0123456789abcdef"), random.Random(seed)
    start = datetime(2026, 3, 1, tzinfo=UTC).timestamp()
    out = []
    for i in range(n):
        kind, data = life.next_event(start + i)
        out.append(_row(i, kind, data, event_id(rng), start + i, "test" if i % 9 == 0 else None))
    return out


def _row(i: int, kind: str, data: dict[str, Any], eid: str, ts: float, purpose: str | None) -> EventRow:
    from datetime import UTC, datetime

    env: dict[str, Any] = {
        "specversion": "1.0",
        "type": kind,
        "source": "urn:auth0:acme.example.test",
        "id": eid,
        "time": datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "data": data,
        "xtenant": "acme",
        "xstream": "est_" + "a" * 16,
    }
    if purpose:
        env["xpurpose"] = purpose
    text = orjson.dumps({"offset": f"off-{i:08d}", "event": env}).decode()
    message = decode_frame(kind, text)
    assert isinstance(message, EventMessage)
    return EventRow.from_message(message, text, received_at=1.0)


def user_row(i: int, user: dict[str, Any], eid: str) -> EventRow:
    """A user.created event for `user` (user_id, email, name…), for hand-made edge cases."""
    obj = {
        "created_at": "2026-03-01T00:00:00Z",
        "updated_at": "2026-03-01T00:00:00Z",
        "identities": [],
        **user,
    }
    return _row(i, "user.created", {"object": obj}, eid, 1_772_323_200 + i, None)


def write(path: Any, rows: list[EventRow]) -> None:
    writer = StoreWriter(path)
    for start in range(0, len(rows), 100):
        writer.commit_sync(Batch(events=rows[start : start + 100], cursor=f"off-{start}"))
    writer.index_all_sync()
    writer.close()


def stored_events(path: Any) -> list[dict[str, Any]]:
    """Every stored event as the model sees it (columns + parsed message), read straight from the file."""
    import sqlite3

    from tenant_events.store.records import summary_of

    conn = sqlite3.connect(path)
    try:
        cols = ("seq", "event_id", "type", "tenant", "source", "purpose", "summary", "raw")
        rows = conn.execute(f"SELECT {', '.join(cols)} FROM events ORDER BY seq").fetchall()
    finally:
        conn.close()
    out = []
    for r in rows:
        ev = dict(zip(cols, r, strict=True))
        ev["summary"] = ev["summary"] or summary_of(ev["type"], ev["raw"])
        ev["message"] = orjson.loads(ev["raw"])
        out.append(ev)
    return out


def expected_ids(events: list[dict[str, Any]], query: str) -> list[str]:
    """Event ids the query matches, in stored order."""
    from tenant_events.query import parse

    node = parse(query)
    return [e["event_id"] for e in events if node is None or matches(node, e)]
