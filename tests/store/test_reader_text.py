"""The reader's text search and seq-bounded counts agree with a plain Python model of the stored rows, whether a
row is in the full-text index or still in the unindexed tail (where a LIKE scan finds it), at any page size."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import orjson
import pytest

from helpers.events_factory import row
from tenant_events.store import Batch, EventFilter, EventReader, StoreWriter

N = 240
TYPES = ("user.created", "user.deleted", "organization.created")


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, object]]]:
    """N events (mixed types, every 7th a test event), committed with duplicates so seq has holes."""
    path = tmp_path_factory.mktemp("reader") / "acme.sqlite3"
    writer = StoreWriter(path)
    rows = [row(i, type_=TYPES[i % 3], purpose="test" if i % 7 == 0 else None) for i in range(N)]
    for start in range(0, N, 40):
        batch = rows[start : start + 40]
        writer.commit_sync(
            Batch(events=batch + batch[:5], cursor=f"off-{start}")
        )  # duplicates use seq numbers up
    writer.index_all_sync()
    writer.close()
    conn = sqlite3.connect(path)
    model = [
        {"seq": s, "id": e, "type": t, "purpose": p, "text": f"{e}\n{summ}\n{raw}".lower()}
        for s, e, t, p, summ, raw in conn.execute(
            "SELECT seq, event_id, type, purpose, summary, raw FROM events"
        )
    ]
    conn.close()
    assert max(m["seq"] for m in model) > N  # seq has holes: counting by seq arithmetic would be wrong
    return path, model


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


def expected(model: list[dict[str, object]], f: EventFilter, lo: int = 0, hi: int = 10**9) -> list[int]:
    terms = f.text.lower().split()
    out = [
        int(m["seq"])  # type: ignore[call-overload]
        for m in model
        if all(t in str(m["text"]) for t in terms)
        and (not f.types or m["type"] in f.types)
        and (f.include_test or m["purpose"] != "test")
        and lo <= int(m["seq"]) <= hi  # type: ignore[call-overload]
    ]
    return sorted(out, reverse=True)


@pytest.mark.parametrize("indexed_fraction", [1.0, 0.5, 0.0])
def test_text_search_is_the_same_indexed_or_not(stored, indexed_fraction):
    path, model = stored
    seqs = sorted(int(m["seq"]) for m in model)  # type: ignore[call-overload]
    set_indexed_upto(path, seqs[int(indexed_fraction * (len(seqs) - 1))] if indexed_fraction else 0)
    sample = next(m for m in model if int(m["seq"]) == seqs[len(seqs) // 3])  # type: ignore[call-overload]
    filters = [
        EventFilter(text="user1"),
        EventFilter(text="EXAMPLE"),
        EventFilter(text=str(sample["id"])),
        EventFilter(text="user1 example.com"),
        EventFilter(text="user1", types=frozenset({"user.deleted"}), include_test=False),
        EventFilter(text="org-1", include_test=False),
        EventFilter(text="nothing-like-this"),
    ]
    with EventReader(path) as reader:
        for f in filters:
            want = expected(model, f)
            assert f.text == "nothing-like-this" or want, f
            assert reader.count(f) == len(want), f
            assert [e.seq for e in reader.page_before(f, None, 1000)] == want, f
            assert [e.seq for e in reader.page(f, 0, 1000)] == want, f
            paged, before = [], None  # keyset paging in small pages walks the same rows
            while page := reader.page_before(f, before, 7):
                paged += [e.seq for e in page]
                before = page[-1].seq
            assert paged == want, f
            lo, hi = seqs[len(seqs) // 4], seqs[3 * len(seqs) // 4]
            assert reader.count(f, min_seq=lo, max_seq=hi) == len(expected(model, f, lo, hi)), f
            assert reader.count(f, min_seq=hi) == len(expected(model, f, hi)), f
            assert reader.count(f, max_seq=lo) == len(expected(model, f, 0, lo)), f
        hit = reader.page_before(EventFilter(text=str(sample["id"])), None, 5)
        assert [e.event_id for e in hit] == [sample["id"]]
        assert orjson.loads(reader.find(str(sample["id"])).raw or "{}")["event"]["id"] == sample["id"]  # type: ignore[union-attr]


def test_seq_bounded_counts_without_text(stored):
    path, model = stored
    seqs = sorted(int(m["seq"]) for m in model)  # type: ignore[call-overload]
    f = EventFilter(types=frozenset({"user.created", "organization.created"}), include_test=False)
    with EventReader(path) as reader:
        for lo, hi in [
            (0, seqs[-1]),
            (seqs[10], seqs[50]),
            (seqs[50], seqs[10]),
            (seqs[-1] + 1, seqs[-1] + 9),
        ]:
            assert reader.count(f, min_seq=lo, max_seq=hi) == len(expected(model, f, lo, hi))
        assert reader.count(EventFilter(), min_seq=seqs[100]) == len(seqs) - 100
