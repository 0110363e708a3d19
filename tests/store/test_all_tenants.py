"""The "All tenants" view: three real stores paged as one, in (event time, tenant, seq) order, with the filters of
a single store; ties across and within stores and events stored out of time order included."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from helpers.entity_events import T0, envelope_row
from tenant_events.store import Batch, EventFilter, StoreWriter
from tenant_events.store.all_tenants import AllTenantsKey, AllTenantsReader
from tenant_events.store.time_pager import FEW_MATCHES, FEW_ROWS

TYPES = ("user.created", "user.updated", "organization.created", "group.member.added")


def _rows(tenant_index: int, n: int, rng: random.Random):
    """n events; times on a coarse grid (so stores share milliseconds, and one store has several in one), stored
    in an order that is mostly, not entirely, their time order."""
    out = []
    for i in range(n):
        kind = rng.choice(TYPES)
        if kind.startswith("user"):
            obj = {
                "user_id": f"auth0|{tenant_index}-{i}",
                "email": f"u{i}@t{tenant_index}.example",
                "created_at": "x",
                "updated_at": "x",
                "identities": [],
            }
        elif kind == "organization.created":
            obj = {
                "id": f"org_{tenant_index:04d}{i:012d}",
                "name": f"needle-{i}" if i % 9 == 0 else f"org-{i}",
            }
        else:
            obj = {
                "group": {"id": f"grp_{i:016d}", "name": "g"},
                "member": {"member_type": "user", "id": "u"},
            }
        ms = i * 250 + rng.choice((0, 0, 0, 250, -250, -750))  # ties and a few late arrivals
        row = envelope_row(kind, {"object": obj}, T0 + timedelta(milliseconds=ms), tenant_index * 100_000 + i)
        if rng.random() < 0.1:
            row = row._replace(purpose="test")
        out.append(row)
    return out


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    rng = random.Random(7)
    root = tmp_path_factory.mktemp("all-tenants")
    paths, expected = {}, []
    for index, tenant in enumerate(("globex", "acme", "initech")):  # not in name order on purpose
        path = root / f"{tenant}.sqlite3"
        writer = StoreWriter(path)
        rows = _rows(index, 300 + 50 * index, rng)
        for start in range(0, len(rows), 40):
            writer.commit_sync(Batch(events=rows[start : start + 40], cursor=str(start)))
        writer.index_all_sync()
        writer.close()
        paths[tenant] = path
        expected += [(r.time_ms, tenant, seq, r) for seq, r in enumerate(rows, start=1)]
    expected.sort(key=lambda x: x[:3], reverse=True)
    return paths, expected


def _walk_back(reader, f, limit):
    out, key = [], None
    while True:
        page = reader.page_before(f, key, limit)
        out += page
        if len(page) < limit:
            return out
        key = page[-1].key


def _expected(expected, keep):
    return [(ms, tenant, seq) for ms, tenant, seq, row in expected if keep(row)]


@pytest.mark.parametrize("limit", [1, 7, 200, 2000])
def test_pages_newest_first_across_stores_in_one_order(stores, limit):
    paths, expected = stores
    with AllTenantsReader(paths) as reader:
        got = _walk_back(reader, EventFilter(), limit)
        assert [(e.time_ms, e.tenant, e.event.seq) for e in got] == _expected(expected, lambda r: True)
        assert [e.event.event_id for e in got[:3]] == [x[3].event_id for x in expected[:3]]
        # and forward from the oldest, one position at a time
        oldest = got[-1].key
        forward = [got[-1]]
        while page := reader.page_after(EventFilter(), forward[-1].key, limit):
            forward += page
        assert [e.key for e in forward] == [e.key for e in reversed(got)]
        assert oldest == forward[0].key
        assert reader.count() == len(expected)


def test_a_position_between_rows_of_one_millisecond_is_exact(stores):
    paths, expected = stores
    ms = next(
        x[0] for i, x in enumerate(expected) if i and expected[i - 1][0] == x[0]
    )  # a shared millisecond
    with AllTenantsReader(paths) as reader:
        for tenant in ("acme", "globex", "initech", "zzz", ""):
            key = AllTenantsKey(ms, tenant, 5)
            page = reader.page_before(EventFilter(), key, 50)
            assert [e.key for e in page] == sorted(
                (
                    AllTenantsKey(m, t, s)
                    for m, t, s, _ in expected
                    if (m, t, s) < (key.time_ms, key.tenant, key.seq)
                ),
                reverse=True,
            )[:50]


@pytest.mark.parametrize(
    ("flt", "keep"),
    [
        (
            EventFilter(types=frozenset({"user.created", "user.updated"})),
            lambda r: r.type.startswith("user."),
        ),
        (EventFilter(types=frozenset({"organization.created"})), lambda r: r.type == "organization.created"),
        (EventFilter(text="needle"), lambda r: '"needle-' in r.raw),
        (EventFilter(include_test=False), lambda r: r.purpose != "test"),
        (
            EventFilter(since=T0 + timedelta(seconds=20), until=T0 + timedelta(seconds=40)),
            lambda r: (
                (T0 + timedelta(seconds=20)).timestamp() * 1000
                <= r.time_ms
                < (T0 + timedelta(seconds=40)).timestamp() * 1000
            ),
        ),
    ],
    ids=["common types", "rare type", "text", "no test events", "time range"],
)
def test_filters_are_the_single_stores_filters(stores, flt, keep):
    paths, expected = stores
    with AllTenantsReader(paths) as reader:
        got = _walk_back(reader, flt, 13)
        assert [(e.time_ms, e.tenant, e.event.seq) for e in got] == _expected(expected, keep)
        assert reader.count(flt) == len(got)


@pytest.mark.parametrize(
    "flt",
    [EventFilter(types=frozenset({"user.created"})), EventFilter(text="needle"), EventFilter(text="example")],
)
def test_each_plan_gives_the_same_pages(stores, flt, monkeypatch):
    """Few matches: the type index or the full-text matches, sorted by time. Many: a walk of the time index (for
    text in chunks checked against the full-text index)."""
    paths, _expected = stores
    with AllTenantsReader(paths) as reader:
        few = _walk_back(reader, flt, 25)
        few_forward = reader.page_after(flt, few[-1].key, 1000)
    monkeypatch.setattr("tenant_events.store.time_pager.FEW_ROWS", 1)
    monkeypatch.setattr("tenant_events.store.time_pager.FEW_MATCHES", 1)
    monkeypatch.setattr("tenant_events.store.time_pager.CHUNK", 7)
    monkeypatch.setattr("tenant_events.store.time_pager._RUN_GAP", 2)
    with AllTenantsReader(paths) as reader:
        many = _walk_back(reader, flt, 25)
        many_forward = reader.page_after(flt, many[-1].key, 1000)
    assert FEW_ROWS > 1 and FEW_MATCHES > 1 and few == many and few_forward == many_forward
    assert len(few) == reader_count(paths, flt) > 0


def reader_count(paths, flt):
    with AllTenantsReader(paths) as reader:
        return reader.count(flt)


def test_a_common_word_is_found_in_the_rows_the_indexer_has_not_reached(tmp_path, monkeypatch):
    late = tmp_path / "zeta.sqlite3"
    writer = StoreWriter(late)
    rows = _rows(9, 120, random.Random(3))
    writer.commit_sync(Batch(events=rows[:60], cursor="a"))
    writer.index_all_sync()
    writer.commit_sync(Batch(events=rows[60:], cursor="b"))  # not indexed: found by substring
    writer.close()
    monkeypatch.setattr("tenant_events.store.time_pager.FEW_MATCHES", 1)
    monkeypatch.setattr("tenant_events.store.time_pager.CHUNK", 9)
    with AllTenantsReader({"zeta": late}) as reader:
        got = [
            e.event.seq for e in _walk_back(reader, EventFilter(text="t9"), 5)
        ]  # this store's email domain
    want = sorted(((r.time_ms, seq) for seq, r in enumerate(rows, 1) if "@t9.example" in r.raw), reverse=True)
    assert got == [seq for _ms, seq in want] and any(seq > 60 for seq in got)


def test_counts_and_histogram_add_up(stores):
    paths, expected = stores
    with AllTenantsReader(paths) as reader:
        by_type = reader.counts_by_type()
        assert sum(by_type.values()) == len(expected)
        assert by_type["organization.created"] == sum(
            1 for x in expected if x[3].type == "organization.created"
        )
        histogram = reader.histogram(EventFilter(), 60)
        assert sum(sum(f.values()) for _, f in histogram) == len(expected)
        assert [start for start, _ in histogram] == sorted({x[0] // 60_000 * 60 for x in expected})
        newest = reader.page_before(EventFilter(), None, 1)[0]
        assert reader.get(newest.tenant, newest.event.seq).raw == expected[0][3].raw
