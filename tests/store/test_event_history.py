"""The rules' history read over both tiers: a store whose older months moved to the archive gives the same events,
each once, oldest first, as the same store kept live, and so the same backtest of every built-in rule; the
events delivered late (stored after newer ones, some still live while their month is archived) take their
place by event time."""

from __future__ import annotations

import random

import pytest

from helpers.entity_events import T0, envelope_row
from tenant_events.alert_settings import WorkingHours
from tenant_events.alerts.backtest import backtests
from tenant_events.alerts.builtin_rules import BUILTIN_RULES
from tenant_events.alerts.rule_engine import eval_rows
from tenant_events.simulator.generator import TenantLife
from tenant_events.simulator.world import iso_ms
from tenant_events.store import AlertInbox, Batch, StoreWriter
from tenant_events.store.archive_catalog import snapshot
from tenant_events.store.archive_keeper import keep
from tenant_events.store.records import EventRow
from tenant_events.store.schema import connect
from tenant_events.values.retention import Retention

N = 1500
GAP_S = 4000.0  # ~70 days of events: two months archived, a month live


def _rows() -> list[EventRow]:
    """The simulator's tenant life over ~70 days, in the order they are stored: a few delivered late."""
    life = TenantLife(5, tenant_id="ten_DemoTenant000001")
    rng = random.Random(5)
    ts, rows = T0.timestamp(), []
    for i in range(N):
        ts += rng.expovariate(1 / GAP_S)
        name, data = life.next_event(ts)
        rows.append(envelope_row(name, data, iso_ms(ts), i)._replace(received_at=ts))
    for i in range(0, N - 1, 9):  # neighbours swapped: stored out of time order
        rows[i], rows[i + 1] = rows[i + 1], rows[i]
    late = [
        rows.pop(i)._replace(received_at=ts) for i in (900, 700, 300)
    ]  # live while their month is archived
    return rows + late


def _store(path, rows: list[EventRow], archive: bool) -> None:
    writer = StoreWriter(path)
    try:
        for at in range(0, len(rows), 400):
            writer.commit_sync(Batch(events=rows[at : at + 400], cursor=str(at)))
        if archive:
            writer.index_all_sync()  # the mover takes only what the directory and the history have taken in
            newest = max(r.time_ms for r in rows) / 1000
            keep(writer, Retention(keep_live_days=30, settle_seconds=0), newest + 86_400)
    finally:
        writer.close()


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    folder = tmp_path_factory.mktemp("history")
    rows = _rows()
    live, tiered = folder / "live.sqlite3", folder / "tiered.sqlite3"
    _store(live, rows, archive=False)
    _store(tiered, rows, archive=True)
    return rows, live, tiered


def test_both_tiers_read_as_one_store_each_event_once_by_time(stores, monkeypatch):
    rows, live, tiered = stores
    conn = connect(tiered, readonly=True)
    try:
        snap = snapshot(conn)
        still_live = conn.execute("SELECT count(*) FROM events").fetchone()[0]
        late_live = conn.execute("SELECT count(*) FROM events WHERE seq > ?", (N - 3,)).fetchone()[0]
    finally:
        conn.close()
    assert len({f.month for f in snap.files}) >= 2 and 0 < still_live < N // 2 and late_live == 3
    monkeypatch.setattr("tenant_events.store.event_history.CHUNK", 97)  # merges across chunks
    cut = sorted(r.time_ms for r in rows)[N // 4]
    for since, until, types, raw_types in [
        (0, 2**62, None, set()),
        (0, 2**62, {"user.created", "group.deleted"}, {"group.deleted"}),
        (cut, cut + 40 * 86_400_000, {"organization.connection.added"}, {"organization.connection.added"}),
    ]:
        with AlertInbox(live) as a, AlertInbox(tiered) as b:
            kept = list(eval_rows(a.history_rows(since, until, types, raw_types)))
            read = list(eval_rows(b.history_rows(since, until, types, raw_types)))
        wanted = sorted(
            (r for r in rows if since <= r.time_ms < until and (types is None or r.type in types)),
            key=lambda r: (r.time_ms, r.event_id),
        )
        assert [r.event_id for r in read] == [r.event_id for r in wanted]
        assert read == kept  # seq, id, type, time, tenant, purpose and raw JSON alike from either tier
        assert all((r.raw is not None) == (r.type in raw_types) for r in read)
        assert all(r.raw == w.raw for r, w in zip(read, wanted, strict=True) if r.raw is not None)


def test_every_built_in_rule_backtests_alike_over_an_archived_store(stores):
    _rows, live, tiered = stores
    rules = list(BUILTIN_RULES)
    at = T0.timestamp() + 120 * 86_400
    with AlertInbox(live) as a, AlertInbox(tiered) as b:
        kept = backtests(a, rules, hours=WorkingHours(), since_ms=0, now=at)
        read = backtests(b, rules, hours=WorkingHours(), since_ms=0, now=at)
    assert [(r.rule_id, r.days, r.firings) for r in read] == [(r.rule_id, r.days, r.firings) for r in kept]
    assert sum(r.alerts for r in read) > 50 and len({d for r in read for d in r.days}) > 30
