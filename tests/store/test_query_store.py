"""The query line run by the store: results against a real SQLite file equal a plain-Python statement of the
rules (helpers/query_model.py), for the README's example queries and for random queries (hypothesis), indexed
or not."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.events_factory import event_id
from helpers.query_model import matches, simulated_rows, stored_events, user_row, write
from tenant_events.query import And, Node, Not, Or, Text, parse, to_text
from tenant_events.store import EventFilter, EventReader

N = 900


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    import random

    rng = random.Random(3)
    edge = [
        user_row(
            N,
            {"user_id": "auth0|canada01", "email": "bob@canada.test", "name": "Bob Canadaville"},
            event_id(rng),
        ),
        user_row(
            N + 1,
            {"user_id": "auth0|pct01", "email": "a_b%c@example.com", "name": "Percy O'Brien"},
            event_id(rng),
        ),
        user_row(
            N + 2,
            {"user_id": "auth0|quote01", "email": 'q"t@example.com', "name": "Zoë Ünïcode"},
            event_id(rng),
        ),
    ]
    path = tmp_path_factory.mktemp("query") / "acme.sqlite3"
    write(path, simulated_rows(N) + edge)
    return path, stored_events(path)


def expected(events: list[dict[str, Any]], query: str, f: EventFilter | None = None) -> list[int]:
    f = f or EventFilter()
    node = parse(query)
    return [
        e["seq"]
        for e in reversed(events)
        if (node is None or matches(node, e))
        and (not f.types or e["type"] in f.types)
        and (f.include_test or e["purpose"] != "test")
    ]


def check(reader: EventReader, events: list[dict[str, Any]], query: str, **kw: Any) -> list[int]:
    """Every read path gives the model's rows: count, newest-first pages (keyset, small), oldest first."""
    f = EventFilter(query=query, **kw)
    want = expected(events, query, f)
    assert reader.count(f) == len(want), query
    assert [e.seq for e in reader.page_before(f, None, 5000)] == want, query
    paged, before = [], None
    while page := reader.page_before(f, before, 97):
        paged += [e.seq for e in page]
        before = page[-1].seq
    assert paged == want, query
    assert [e.seq for e in reader.newer_than(f, 0, 5000)] == want[::-1], query
    assert sum(reader.counts_by_type(f).values()) == len(want), query
    return want


def set_indexed_upto(path: Path, upto: int) -> None:
    """Make every row after `upto` part of the unindexed tail again (as right after a commit); only lowers."""
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(
            "INSERT INTO events_fts (events_fts, rowid, event_id, summary, raw)"
            " SELECT 'delete', seq, event_id, summary, raw FROM events"
            " WHERE seq > ? AND seq <= (SELECT value FROM counters WHERE name = 'fts_upto')",
            (upto,),
        )
        conn.execute("UPDATE events SET summary = NULL WHERE seq > ?", (upto,))
        conn.execute("UPDATE counters SET value = ? WHERE name = 'fts_upto'", (upto,))
    conn.close()


def by_type(events: list[dict[str, Any]], *types: str) -> int:
    return sum(1 for e in events if e["type"] in types)


def test_the_issue_examples(store):
    path, events = store
    with EventReader(path) as reader:
        assert len(check(reader, events, "type:user.deleted")) == by_type(events, "user.deleted") > 0
        org_types = {e["type"] for e in events if e["type"].startswith("organization.")}
        assert len(check(reader, events, "type:organization.*")) == by_type(events, *org_types) > 0
        assert len(check(reader, events, "-type:user.updated")) == len(events) - by_type(
            events, "user.updated"
        )
        assert check(reader, events, "purpose:test") == [e["seq"] for e in reversed(events) if e["purpose"]]
        ada = check(reader, events, "user:ada")
        assert ada and all("ada" in e["raw"].lower() for e in events if e["seq"] in ada)
        assert check(reader, events, "email:bob@canada.test") == [events[-3]["seq"]]
        assert check(reader, events, "org:acme OR org:globex")
        assert check(reader, events, '"ada lovelace" type:user.*')
        assert check(reader, events, "role:admin -type:group.*")


def test_a_field_matches_at_word_starts_not_inside_words(store):
    path, events = store
    canada = events[-3]["seq"]
    with EventReader(path) as reader:
        assert canada not in check(reader, events, "user:ada")  # "Canadaville", "canada.test"
        assert canada in check(reader, events, "user:canada")
        assert canada in check(reader, events, "user:CANADAV")
        assert canada in check(reader, events, "user:*ville")
        assert canada not in check(reader, events, "user:*vill")  # a wildcard covers the whole value


def test_values_are_data_never_sql_or_patterns(store):
    path, events = store
    percy, quote = events[-2]["seq"], events[-1]["seq"]
    with EventReader(path) as reader:
        assert check(reader, events, "email:a_b%c") == [percy]  # LIKE/GLOB wildcards are literal
        assert check(reader, events, "email:a?b") == []
        assert check(reader, events, 'user:"o\'brien"') == [percy]
        assert check(reader, events, 'email:"q\\"t@"') == [quote]
        assert check(reader, events, "user:[a-z]*") == []
        assert check(reader, events, "user:zoë") == [quote]  # not ASCII: no FTS shortcut, still found
        assert check(reader, events, '"\'); DROP TABLE events; --"') == []
        assert reader.count() == len(events)


def test_fields_of_every_kind_find_their_events(store):
    path, events = store
    with EventReader(path) as reader:
        for query in (
            "group:grp",
            "connection:con_",
            "connection:con",
            "role:viewer",
            "ip:203.0.113",
            "client:demo",
            "tenant:acme",
            "source:urn:auth0",
            "family:group",
            "id:evt",
            "email:*.com",
            "org:org_*",
        ):
            assert check(reader, events, query), query
        assert check(reader, events, "family:group") == check(reader, events, "type:group.*")
        assert not check(reader, events, "ip:203.0.113 type:organization.created -ip:203")


def test_with_the_other_filter_controls(store):
    path, events = store
    with EventReader(path) as reader:
        check(reader, events, "-purpose:test user:ada", include_test=False)
        check(reader, events, "ada OR acme", types=frozenset({"user.created", "organization.created"}))


@pytest.mark.parametrize("indexed", [0.5, 0.0])
def test_the_same_rows_before_the_indexer_reaches_them(store, tmp_path, indexed):
    """Field and type terms do not depend on the FTS index; whole words are found the same in the tail."""
    path, events = store
    copy = tmp_path / "copy.sqlite3"
    copy.write_bytes(path.read_bytes())
    set_indexed_upto(copy, events[int(indexed * (len(events) - 1))]["seq"] if indexed else 0)
    with EventReader(copy) as reader:
        for query in (
            "type:user.deleted",
            "user:ada",
            "org:acme OR role:admin",
            "-email:example.com",
            "lovelace",
            "acme -type:organization.*",
            "user:*ville",
            '"Ada Lovelace"',
        ):
            f = EventFilter(query=query)
            want = expected(events, query)
            assert [e.seq for e in reader.page_before(f, None, 5000)] == want, query
            assert reader.count(f) == len(want), query
            assert [e.seq for e in reader.newer_than(f, 0, 5000)] == want[::-1], query


def test_export_iter_with_a_query(store):
    path, events = store
    with EventReader(path) as reader:
        f = EventFilter(query="type:organization.member.* OR user:grace")
        got = [(e.seq, raw) for e, raw in reader.export_iter(chunk=17, f=f)]
    want = expected(events, f.query)[::-1]
    assert [s for s, _ in got] == want and want
    assert all(raw == next(e["raw"] for e in events if e["seq"] == s) for s, raw in got[:5])


# -- random queries over the data's own vocabulary ------------------------------------------------------
WORDS = ["ada", "lovelace", "acme", "admin", "berlin", "example", "auth0", "google", "hopper", "grace", "zzz"]
TERMS = [
    "type:user.*",
    "type:user.deleted",
    "type:organization.member.*",
    "type:*.deleted",
    "family:group",
    "user:ada",
    "user:grace.hopper",
    "user:auth0",
    'user:"Ada Lovelace"',
    "user:gr*",
    "user:*@example.com",
    "email:ada",
    "email:example.com",
    "org:acme",
    "org:globex*",
    "org:org_",
    "group:grp",
    "role:admin",
    "role:viewer",
    "connection:con",
    "connection:email",
    "ip:203.0.113.1",
    "client:demo",
    "purpose:test",
    "id:evt",
    "tenant:acme",
    "source:acme",
]
leaves = st.one_of(
    st.sampled_from(WORDS).map(Text),
    st.sampled_from(["ada lovelace", "grace hopper", "demo service"]).map(lambda p: Text(p, True)),
    st.sampled_from(TERMS).map(lambda q: parse(q)),
)


def _extend(children: st.SearchStrategy[Node]) -> st.SearchStrategy[Node]:
    return st.one_of(
        children.map(Not),
        st.lists(children.filter(lambda c: not isinstance(c, And)), min_size=2, max_size=3).map(
            lambda cs: And(tuple(cs))
        ),
        st.lists(children.filter(lambda c: not isinstance(c, Or)), min_size=2, max_size=3).map(
            lambda cs: Or(tuple(cs))
        ),
    )


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.recursive(leaves, _extend, max_leaves=6))
def test_random_queries_match_the_model(store, tree):
    path, events = store
    with EventReader(path) as reader:
        check(reader, events, to_text(tree))
