"""Counting with a time bound over a wide seq window walks the time index, not the whole table (SQLite has no
statistics to choose; the window's filter counts at 1M rows took seconds); a narrow window keeps the seq range."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from helpers.events_factory import row
from tenant_events.store import Batch, EventFilter, EventReader, StoreWriter

N = 25_000


def _plans(reader: EventReader, call, prefix: str = "SELECT count(*) FROM events"):
    seen: list[str] = []
    reader._conn.set_trace_callback(seen.append)
    try:
        result = call()
    finally:
        reader._conn.set_trace_callback(None)
    queries = [q for q in seen if q.startswith(prefix)]
    assert len(queries) == 1, seen
    plan = reader._conn.execute("EXPLAIN QUERY PLAN " + queries[0]).fetchall()
    return result, " ".join(str(r[3]) for r in plan)


def test_time_bounded_counts_use_the_time_index_unless_the_seq_window_is_narrow(tmp_path):
    path = tmp_path / "p.sqlite3"
    writer = StoreWriter(path)
    try:
        for start in range(0, N, 1000):
            writer.commit_sync(Batch(events=[row(i) for i in range(start, start + 1000)], cursor=str(start)))
    finally:
        writer.close()
    last = datetime(2026, 11, 1, tzinfo=UTC) + timedelta(seconds=N - 1)  # events_factory: one a second
    recent = EventFilter(since=last - timedelta(seconds=99))
    with EventReader(path) as reader:
        n, plan = _plans(reader, lambda: reader.count(recent, min_seq=1, max_seq=N))
        assert n == 100 and "events_time_id" in plan, plan
        n, plan = _plans(reader, lambda: reader.count(recent, min_seq=1))
        assert n == 100 and "events_time_id" in plan, plan
        n, plan = _plans(reader, lambda: reader.count(recent, min_seq=N - 9, max_seq=N))
        assert n == 10 and "PRIMARY KEY" in plan, plan
        # the table's aggregates and deep-page anchors for the same filter: the time index too, not every row
        by_type, plan = _plans(reader, lambda: reader.counts_by_type(recent), "SELECT type, count(*)")
        assert by_type == {"user.created": 100} and "events_time_id" in plan, plan
        anchors, plan = _plans(reader, lambda: reader.seq_anchors(recent, N, 30), "SELECT seq FROM (")
        assert anchors == [N, N - 30, N - 60, N - 90] and "events_time_id" in plan, plan
