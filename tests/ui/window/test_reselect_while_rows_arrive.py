"""A filter change finds the event the detail pane shows again, on a worker: a count of its newer matches, over a
year's archive seconds. On a busy tenant new rows arrive on top during every such count. The event's place then
moves down by as many rows, which the window knows without counting again: the row is selected (or the pane
cleared when the event no longer matches) however fast rows keep arriving, never counted over and over.

The pane's own read of an event (its JSON) may answer after a filter hid the event: the pane and the line of
its names stay cleared. And each row keeps its stripe while rows arrive on top.

The store is real; its worker reader holds each count of an event's place until a batch of new events has been
stored and shown on top, as a tenant whose batches come faster than the count would.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, signal_future, until
from helpers.held_reads import HeldFirstPage
from helpers.painted_rows import row_background
from helpers.query_model import simulated_rows, write
from tenant_events.store import Batch, EventFilter, EventReader, StoreWriter
from tenant_events.ui.window.main_window import MainWindow
from tenant_events.values.events import StoredEvent
from tenant_events.view.tenant_reader import TenantReader

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]

STORED, BATCH = 2000, 25
ARRIVAL_WAIT_S = 30.0


class ArrivalsDuringLookups(TenantReader):
    """A real worker reader: while `arriving`, each count of an event's place waits until rows arrived on top."""

    def __init__(self, reader: EventReader) -> None:
        super().__init__(reader)
        self.arriving = False
        self.lookups = 0
        self.need, self.arrived = threading.Event(), threading.Event()

    def count(self, flt: EventFilter, max_seq: int, min_seq: int = 0) -> int:
        if self.arriving and min_seq > 0:
            self.lookups += 1
            self.arrived.clear()
            self.need.set()
            assert self.arrived.wait(ARRIVAL_WAIT_S), "no rows arrived"
        return super().count(flt, max_seq, min_seq)


class HeldDetail(TenantReader):
    """A real search reader whose reads of one event's JSON (the detail pane's) wait until `release` is set."""

    def __init__(self, reader: EventReader) -> None:
        super().__init__(reader)
        self.hold: int | None = None
        self.reading, self.release = threading.Event(), threading.Event()

    def get(self, seq: int) -> StoredEvent | None:
        if seq == self.hold:
            self.reading.set()
            assert self.release.wait(ARRIVAL_WAIT_S), "the read was never let go"
        return super().get(seq)


class HeldLookup(TenantReader):
    """A real worker reader whose counts of an event's place wait, while `holding`, until `release` is set."""

    def __init__(self, reader: EventReader) -> None:
        super().__init__(reader)
        self.holding = False
        self.reading, self.release = threading.Event(), threading.Event()

    def count(self, flt: EventFilter, max_seq: int, min_seq: int = 0) -> int:
        if self.holding and min_seq > 0:
            self.reading.set()
            assert self.release.wait(ARRIVAL_WAIT_S), "the count was never let go"
        return super().count(flt, max_seq, min_seq)


class Tenant:
    def __init__(self, tmp_path: Path) -> None:
        self.path = tmp_path / "acme.sqlite3"
        rows = simulated_rows(STORED + 100 * BATCH, seed=4)
        self.later = rows[STORED:]
        write(self.path, rows[:STORED])
        self.ui, self.worker = EventReader(self.path), EventReader(self.path)
        self.noted = ArrivalsDuringLookups(self.worker)
        self.writer = StoreWriter(self.path)

    def store_batch(self) -> None:
        batch, self.later = self.later[:BATCH], self.later[BATCH:]
        self.writer.commit_sync(Batch(events=batch, cursor=f"later-{len(self.later)}"))

    def close(self) -> None:
        self.writer.close()
        self.ui.close()
        self.worker.close()


@pytest.fixture
def setup(qtbot: Any, qloop: Any, tmp_path: Path) -> Iterator[tuple[MainWindow, Tenant]]:
    tenant = Tenant(tmp_path)
    w = MainWindow(str(tmp_path / "window.ini"))
    w.show()
    yield w, tenant
    run_async(qloop, w.shutdown())
    w.close()
    w.deleteLater()
    tenant.close()


async def keep_rows_arriving(w: MainWindow, tenant: Tenant) -> None:
    """Each time a lookup counts, a batch is stored and shown on top before the count goes on."""
    while True:
        await until(tenant.noted.need.is_set, 60, "a lookup")
        tenant.noted.need.clear()
        before = w.model.rowCount()
        tenant.store_batch()
        assert w.model.advance_head() > 0 and w.model.rowCount() > before
        tenant.noted.arrived.set()


def newer_matches(tenant: Tenant, w: MainWindow, seq: int) -> int:
    return TenantReader(tenant.ui).count(w.model.event_filter, w.model.head, min_seq=seq + 1)


def test_the_row_being_read_is_found_again_while_rows_keep_arriving(qloop: Any, setup: Any) -> None:
    w, tenant = setup

    async def scenario() -> None:
        updated = signal_future(w.aggregates_updated)
        w.add_tenant("acme", TenantReader(tenant.ui), tenant.noted)
        await updated
        picked_row = next(r for r in range(40, 80) if w.model.event_at(r).type != "user.created")  # type: ignore[union-attr]
        w.follow.select_quietly(picked_row)
        picked = w.model.event_at(picked_row)
        assert picked is not None
        await until(lambda: w.detail.shown is not None and w.detail.shown.seq == picked.seq, 10, "the pane")

        tenant.noted.arriving = True
        arrivals = asyncio.ensure_future(keep_rows_arriving(w, tenant))
        try:
            # a filter it still matches: its row selected again, below the rows that arrived meanwhile
            w.filter_bar.set_types({t for t in w.filter_bar.type_actions if t != "user.created"})
            await until(lambda: w.table.currentIndex().isValid(), 20, "the row selected again")
            row = w.table.currentIndex().row()
            kept = w.model.event_at(row)
            assert kept is not None and kept.seq == picked.seq
            assert row == newer_matches(tenant, w, picked.seq)
            assert w.model.head > STORED  # rows arrived on top meanwhile
            assert tenant.noted.lookups == 1  # its place counted once, then moved by the rows that arrived
            assert w.detail.shown is not None and w.detail.shown.seq == picked.seq

            # a filter that hides it: the pane cleared, rows still arriving during the lookup
            w.filter_bar.set_types({t for t in w.filter_bar.type_actions if t != picked.type})
            await until(lambda: w.detail.shown is None, 20, "the pane cleared")
            assert tenant.noted.lookups == 2
        finally:
            arrivals.cancel()
            tenant.noted.arriving = False
            tenant.noted.arrived.set()

    run_async(qloop, scenario(), timeout=120)


def test_a_cleared_pane_stays_cleared_when_the_events_json_comes_late(qloop: Any, setup: Any) -> None:
    """The pane reads a chosen row's JSON on a read thread; a filter that hides the event clears the pane while
    that read is still out (a loaded machine): its late answer must not bring the hidden event back."""
    w, tenant = setup
    search = HeldDetail(EventReader(tenant.path))

    async def scenario() -> None:
        updated = signal_future(w.aggregates_updated)
        w.add_tenant("acme", TenantReader(tenant.ui), TenantReader(tenant.worker), search)
        await updated
        row = next(r for r in range(40, 80) if w.model.event_at(r).type != "user.created")  # type: ignore[union-attr]
        picked = w.model.event_at(row)
        assert picked is not None
        search.hold, before = picked.seq, set(w.feed.tasks)
        w.follow.select_quietly(row)
        await until(search.reading.is_set, 10, "the pane reading the event")
        reading = [t for t in w.feed.tasks if t not in before]  # the pane's read of the event's JSON

        names = w.entities.timelines.names  # the pane's line of the event's names, as links
        assert not names.isHidden() and "href" in names.text()
        # every row named already: the filter's rows come with no names to read (nothing else redraws the line)
        everything = TenantReader(tenant.ui).page(EventFilter(), w.model.head, 0, STORED)
        w.model.names.page_read(everything)
        await until(lambda: all(w.model.names.sentence(e.seq) for e in everything), 20, "every row named")

        w.filter_bar.set_types({t for t in w.filter_bar.type_actions if t != picked.type})
        await until(lambda: w.detail.shown is None, 20, "the pane cleared")
        search.release.set()
        await asyncio.gather(*reading, return_exceptions=True)
        assert w.detail.shown is None and not w.table.currentIndex().isValid()
        assert names.isHidden()  # no names of an event the pane no longer shows

    try:
        run_async(qloop, scenario(), timeout=120)
    finally:
        search.release.set()
        search.close()


def test_each_row_keeps_its_stripe_while_rows_arrive_on_top(qloop: Any, setup: Any) -> None:
    """Rows alternate in colour. Put on top an odd number at a time, they must not flip every stripe below them:
    the row being read would flash at each batch."""
    w, tenant = setup

    async def scenario() -> None:
        updated = signal_future(w.aggregates_updated)
        w.add_tenant("acme", TenantReader(tenant.ui), TenantReader(tenant.worker))
        await updated
        assert BATCH % 2 == 1
        before = [row_background(w.table, row) for row in (10, 11)]
        assert before[0] != before[1]  # the rows are striped
        tenant.store_batch()
        assert w.model.advance_head() == BATCH
        assert [row_background(w.table, row + BATCH) for row in (10, 11)] == before

    run_async(qloop, scenario(), timeout=120)


def test_a_lookup_for_a_query_replaced_meanwhile_leaves_the_pane_to_the_newer_one(
    qloop: Any, setup: Any
) -> None:
    """A query that hides the event shown, then, while the window still counts where the event sits in it, a
    query that shows it again, its first page still being read: the first query's answer must not clear the pane
    (the newer query finds the event itself once its rows are shown)."""
    w, tenant = setup
    lookup, pages = HeldLookup(EventReader(tenant.path)), HeldFirstPage(EventReader(tenant.path))

    def query(text: str) -> None:
        w.filter_bar.search.setText(text)
        w.filter_bar.search.returnPressed.emit()

    async def scenario() -> None:
        updated = signal_future(w.aggregates_updated)
        w.add_tenant("acme", TenantReader(tenant.ui), lookup, pages)
        await updated
        row = 50
        picked = w.model.event_at(row)
        assert picked is not None
        other = next(
            e.type for r in range(200) if (e := w.model.event_at(r)) is not None and e.type != picked.type
        )
        w.follow.select_quietly(row)
        await until(lambda: w.detail.pretty and w.detail.shown.seq == picked.seq, 10, "the pane")  # type: ignore[union-attr]

        lookup.holding = True
        query(f"type:{other}")  # hides it: its place looked up once the query's rows are shown
        await until(lookup.reading.is_set, 20, "the event looked up in the first query")
        lookups = [t for t in w.feed.tasks if t.get_coro().__qualname__ == "_reselect"]
        lookup.holding, pages.holding = False, True
        query(f"type:{picked.type}")  # shows it again
        await until(pages.reading.is_set, 20, "the second query's rows being read")
        lookup.release.set()
        await asyncio.gather(*lookups, return_exceptions=True)
        assert w.detail.shown is not None and w.detail.shown.seq == picked.seq, "cleared by the query before"

        pages.holding = False
        pages.release.set()
        await until(lambda: w.table.currentIndex().isValid(), 20, "the event selected in the newer query")
        kept = w.model.event_at(w.table.currentIndex().row())
        assert kept is not None and kept.seq == picked.seq
        assert w.detail.shown is not None and w.detail.shown.seq == picked.seq

    try:
        run_async(qloop, scenario(), timeout=120)
    finally:
        lookup.release.set()
        pages.release.set()
        lookup.close()
        pages.close()


def test_jumping_to_the_newest_while_the_event_is_looked_up_is_not_undone(qloop: Any, setup: Any) -> None:
    """A filter change looks up where the event shown sits (over a year, seconds); the user jumps to the newest
    meanwhile (N, the pill, Follow): the lookup's answer must not pick the row and pull the view back to it."""
    w, tenant = setup
    lookup = HeldLookup(EventReader(tenant.path))

    async def scenario() -> None:
        updated = signal_future(w.aggregates_updated)
        w.add_tenant("acme", TenantReader(tenant.ui), lookup)
        await updated
        row = next(r for r in range(40, 80) if w.model.event_at(r).type != "user.created")  # type: ignore[union-attr]
        picked = w.model.event_at(row)
        assert picked is not None
        w.follow.select_quietly(row)
        await until(lambda: w.detail.pretty and w.detail.shown.seq == picked.seq, 10, "the pane")  # type: ignore[union-attr]

        lookup.holding = True
        w.filter_bar.set_types(
            {t for t in w.filter_bar.type_actions if t != "user.created"}
        )  # still shows it
        await until(lookup.reading.is_set, 20, "the event looked up")
        lookups = [t for t in w.feed.tasks if t.get_coro().__qualname__ == "_reselect"]
        w.follow.jump_to_newest()  # N
        lookup.release.set()
        await asyncio.gather(*lookups, return_exceptions=True)
        assert w.follow.following and not w.table.currentIndex().isValid()
        assert w.table.verticalScrollBar().value() == 0
        assert w.detail.shown is None  # as N leaves it when the row is picked

    try:
        run_async(qloop, scenario(), timeout=120)
    finally:
        lookup.release.set()
        lookup.close()


def test_the_view_the_user_moved_during_a_lookup_stays_where_they_put_it(qloop: Any, setup: Any) -> None:
    """Over a year the row being read is found again after a filter change in seconds: a user who scrolls
    meanwhile keeps the view where they put it; the row is selected again all the same."""
    w, tenant = setup
    worker = HeldLookup(tenant.worker)

    async def scenario() -> None:
        updated = signal_future(w.aggregates_updated)
        w.add_tenant("acme", TenantReader(tenant.ui), worker)
        await updated
        row = next(r for r in range(40, 80) if w.model.event_at(r).type != "user.created")  # type: ignore[union-attr]
        w.follow.select_quietly(row)
        picked = w.model.event_at(row)
        assert picked is not None
        worker.holding = True
        w.filter_bar.set_types({t for t in w.filter_bar.type_actions if t != "user.created"})
        await until(worker.reading.is_set, 20, "the row's place being counted")
        bar = w.table.verticalScrollBar()
        for _ in range(6):
            bar.triggerAction(bar.SliderAction.SliderPageStepAdd)  # the user reads on, further down
        put = bar.value()
        assert put > 0
        worker.release.set()
        await until(lambda: w.table.currentIndex().isValid(), 20, "the row selected again")
        kept = w.model.event_at(w.table.currentIndex().row())
        assert kept is not None and kept.seq == picked.seq
        assert bar.value() == put  # not scrolled back to the row
        assert w.detail.shown is not None and w.detail.shown.seq == picked.seq

    try:
        run_async(qloop, scenario(), timeout=120)
    finally:
        worker.release.set()
