"""A tenant's first page and "All tenants" when reads answer late: the page still being read when the view is
entered or when the same filter is said again, and the view's live rows read twice at once on a busy machine.
Each answer shows what the window shows by then, no more and no less.

The stores are real; a reader's read is held on an event until the test lets it go, after the window has moved
on, so the late answer is made deterministic (no sleeps).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from helpers.entity_events import envelope_row, simulated_rows
from helpers.entity_stores import write_store
from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, signal_future, until
from helpers.held_reads import HeldFirstPage
from tenant_events.entities.all_tenants_pages import AllTenantsPages, AllTenantsRow
from tenant_events.store import Batch, EventFilter, EventReader, StoreWriter
from tenant_events.store.all_tenants import AllTenantsKey
from tenant_events.tenant.committed_rows import RowRanges
from tenant_events.ui.window.filters.filter_bar import ALL_TENANTS
from tenant_events.ui.window.main_window import MainWindow
from tenant_events.ui.window.table.event_table_model import Col
from tenant_events.view.tenant_reader import TenantReader

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]
TENANTS = ("acme", "globex")
HELD_S = 30.0


class HeldPages(AllTenantsPages):
    """The view's real pages over every store; each read named in `holding` waits until its `release` is set."""

    def __init__(self, stores: dict[str, Path]) -> None:
        super().__init__(stores)
        self.holding: set[str] = set()
        self.reads = {"first": 0, "older": 0, "newer": 0}
        self.lock = threading.Lock()
        self.release = {what: threading.Event() for what in self.reads}

    def _held(self, what: str) -> None:
        if what in self.holding:
            with self.lock:
                self.reads[what] += 1
            assert self.release[what].wait(HELD_S), "the read was never let go"

    def first(self, f: EventFilter, limit: int) -> list[AllTenantsRow]:
        self._held("first")
        return super().first(f, limit)

    def older(self, f: EventFilter, key: AllTenantsKey, limit: int) -> list[AllTenantsRow]:
        self._held("older")
        return super().older(f, key, limit)

    def newer(self, f: EventFilter, key: AllTenantsKey, limit: int) -> list[AllTenantsRow]:
        self._held("newer")
        return super().newer(f, key, limit)

    def let_go(self) -> None:
        for event in self.release.values():
            event.set()


class Tenants:
    def __init__(self, tmp_path: Path) -> None:
        self.paths = {name: tmp_path / f"{name}.sqlite3" for name in TENANTS}
        for k, path in enumerate(self.paths.values()):
            write_store(path, 600 + 10 * k, seed=31 + k, story=False, at=5000 + 10 * k)
        self.readers: list[EventReader] = []

    def reader(self, name: str) -> EventReader:
        reader = EventReader(self.paths[name])
        self.readers.append(reader)
        return reader

    def close(self) -> None:
        for reader in self.readers:
            reader.close()


@pytest.fixture
def setup(qtbot: Any, qloop: Any, tmp_path: Path) -> Iterator[tuple[MainWindow, Tenants, HeldFirstPage]]:
    """acme shown; globex's first pages read by a reader the test can hold."""
    tenants = Tenants(tmp_path)
    held = HeldFirstPage(tenants.reader("globex"))
    w = MainWindow(str(tmp_path / "window.ini"))
    w.resize(1600, 900)
    w.show()

    async def fill() -> None:
        w.add_tenant("acme", TenantReader(tenants.reader("acme")), TenantReader(tenants.reader("acme")))
        w.add_tenant(
            "globex", TenantReader(tenants.reader("globex")), TenantReader(tenants.reader("globex")), held
        )
        await until(lambda: w.model.rowCount() > 0 and not w.first_page.busy, 20, "acme's rows")

    run_async(qloop, fill())
    yield w, tenants, held
    held.release.set()
    run_async(qloop, w.shutdown())
    w.close()
    w.deleteLater()
    tenants.close()


def _pane_work(w: MainWindow) -> list[asyncio.Task[Any]]:
    """The window's tasks that may change the detail pane: a row found again, an event's JSON read."""
    return [
        t for t in w.feed.tasks if t.get_coro().__qualname__ in ("_reselect", "EventActions._read_detail")
    ]


def _choose(w: MainWindow, r: int) -> AllTenantsRow:
    view = w.entities.all_tenants.view
    view.setCurrentIndex(view.model().index(r, Col.TYPE))
    row = w.entities.all_tenants.model.rows[r]
    return row


def test_a_tenants_first_page_read_late_leaves_all_tenants_as_it_is(qloop: Any, setup: Any) -> None:
    """globex chosen, its newest rows still being read (a year's archive: seconds), then "All tenants" and a row
    of it: the late page is globex's table's no more, and the row's JSON stays in the pane."""
    w, _tenants, held = setup
    view = w.entities.all_tenants

    async def scenario() -> None:
        held.holding = True
        w.filter_bar.tenant_box.setCurrentText("globex")
        await until(held.reading.is_set, 20, "globex's first page being read")
        w.filter_bar.tenant_box.setCurrentText(ALL_TENANTS)
        await until(lambda: view.model.rowCount() == 200, 20, "the rows of all tenants")
        chosen = _choose(w, 12)
        await until(lambda: w.detail.pretty, 20, "the chosen row's JSON")

        held.release.set()
        await w.first_page.wait()
        await asyncio.gather(*_pane_work(w), return_exceptions=True)  # what the page's answer started
        assert view.active and view.view.currentIndex().row() == 12
        assert w.detail.shown is not None and w.detail.shown.seq == chosen.event.seq
        assert orjson.loads(w.detail.pretty)["event"]["id"] == chosen.event.event_id
        assert w.model.rowCount() == 0  # no tenant's rows behind the view

    run_async(qloop, scenario())


def _store_live(tenants: Tenants, w: MainWindow, first: int, n: int) -> None:
    """`n` events into acme, newer than any stored (a day later), told to the window as the tenant link does."""
    later, _life = simulated_rows(first + n, seed=99)
    rows = []
    for k, r in enumerate(later[first:], start=first):
        data = orjson.loads(r.raw)
        when = f"2026-11-02T12:{k // 60:02d}:{k % 60:02d}.000Z"
        rows.append(envelope_row(r.type, data["event"]["data"], when, 800_000 + k))
    writer = StoreWriter(tenants.paths["acme"])
    try:
        committed = RowRanges("acme").advance(writer.commit_sync(Batch(events=rows, cursor=f"live-{first}")))
    finally:
        writer.close()
    assert committed is not None
    w.events_stored(committed)


def test_live_rows_read_twice_at_once_go_on_top_once(qloop: Any, setup: Any) -> None:
    """A busy machine: the live rows' read takes longer than the next commit's wait, so a second read starts from
    the same top row. Whichever answers last, each new row is on top once."""
    w, tenants, _held = setup
    view = w.entities.all_tenants

    async def scenario() -> None:
        w.filter_bar.tenant_box.setCurrentText(ALL_TENANTS)
        await until(lambda: view.model.rowCount() == 200, 20, "the rows of all tenants")
        view.close()  # the view's own pages, with live reads the test holds
        pages = view.pages = HeldPages(view.stores())
        pages.holding = {"newer"}
        _store_live(tenants, w, 0, 5)
        await until(lambda: pages.reads["newer"] == 1, 20, "the first read of live rows")
        _store_live(tenants, w, 5, 5)
        await until(lambda: pages.reads["newer"] == 2, 20, "a second read from the same top row")
        reads = [t for t in w._tasks if t.get_coro().__qualname__.endswith("._newer")]
        pages.let_go()
        await asyncio.gather(*reads, return_exceptions=True)
        keys = [r.key for r in view.model.rows]
        assert len(keys) == len(set(keys)) == 210, "a live row shown twice"
        assert keys == sorted(keys, reverse=True)
        assert {r.tenant for r in view.model.rows[:10]} == {"acme"}

    run_async(qloop, scenario())


def test_the_same_filter_said_again_keeps_the_tenants_rows_coming(qloop: Any, setup: Any) -> None:
    """globex chosen, its newest rows still being read; Enter in the empty search line says the same filter
    again: the rows being read are still the ones to show."""
    w, _tenants, held = setup

    async def scenario() -> None:
        held.holding = True
        w.filter_bar.tenant_box.setCurrentText("globex")
        await until(held.reading.is_set, 20, "globex's first page being read")
        w.filter_bar.search.returnPressed.emit()
        held.release.set()
        await w.first_page.wait()
        assert w.tenant == "globex" and w.model.rowCount() > 0

    run_async(qloop, scenario())


def test_rows_scrolled_to_while_another_filter_is_read_follow_that_filter(qloop: Any, setup: Any) -> None:
    """A filter changed in "All tenants" reads its first page (every store: seconds); the user scrolls to the end
    of the rows still shown meanwhile. The next page read for them must not be put under the new filter's rows:
    they go on from where the new rows end, none twice and none left out."""
    w, _tenants, _held = setup
    view = w.entities.all_tenants

    async def scenario() -> None:
        w.filter_bar.tenant_box.setCurrentText(ALL_TENANTS)
        await until(lambda: view.model.rowCount() == 200, 20, "the rows of all tenants")
        view.close()  # the view's own pages, with reads the test holds
        pages = view.pages = HeldPages(view.stores())
        pages.holding = {"first", "older"}
        w.filter_bar.set_types({"user.created", "user.updated"})
        await until(lambda: pages.reads["first"] == 1, 20, "the new filter's first page being read")
        view.model.fetchMore()  # the end of the rows still shown
        reads = [t for t in w._tasks if t.get_coro().__qualname__.endswith(("._first", "._older"))]
        older = [t for t in reads if t.get_coro().__qualname__.endswith("._older")]
        await until(
            lambda: pages.reads["older"] == 1 or all(t.done() for t in older), 20, "the next page asked"
        )
        pages.release["first"].set()
        await until(lambda: {r.event.type for r in view.model.rows} <= {"user.created", "user.updated"}, 20)
        pages.release["older"].set()
        await asyncio.gather(*reads, return_exceptions=True)

        keys = [r.key for r in view.model.rows]
        assert {r.event.type for r in view.model.rows} <= {"user.created", "user.updated"}
        assert keys == [r.key for r in pages.first(view.filter, len(keys))], "rows missing or twice"
        view.model.fetchMore()  # and scrolling on reads on from there
        await until(lambda: view.model.rowCount() > len(keys), 20, "the next page")
        assert [r.key for r in view.model.rows] == [
            r.key for r in pages.first(view.filter, view.model.rowCount())
        ]

    try:
        run_async(qloop, scenario())
    finally:
        if isinstance(view.pages, HeldPages):
            view.pages.let_go()


def test_live_rows_while_another_filter_is_read_wait_for_its_rows(qloop: Any, setup: Any) -> None:
    """A filter changed in "All tenants" reads its first page (every store: seconds); live rows arrive meanwhile.
    They are the new filter's, and must not be put on top of the rows of the filter left: they come with the new
    filter's rows, once."""
    w, tenants, _held = setup
    view = w.entities.all_tenants
    types = {r.type for r in simulated_rows(5, seed=99)[0]} | {"user.created"}  # the live rows' types

    async def scenario() -> None:
        w.filter_bar.tenant_box.setCurrentText(ALL_TENANTS)
        await until(lambda: view.model.rowCount() == 200, 20, "the rows of all tenants")
        left = [r.key for r in view.model.rows]
        view.close()  # the view's own pages, with reads the test holds
        pages = view.pages = HeldPages(view.stores())
        pages.holding = {"first"}
        w.filter_bar.set_types(types)
        await until(lambda: pages.reads["first"] == 1, 20, "the new filter's first page being read")
        timer = signal_future(view._live.timeout)
        _store_live(tenants, w, 0, 5)
        await timer
        live = [t for t in w._tasks if t.get_coro().__qualname__.endswith("._newer")]
        await asyncio.gather(*live, return_exceptions=True)
        assert [r.key for r in view.model.rows] == left, (
            "the new filter's live rows over the rows of the one left"
        )

        pages.release["first"].set()
        await until(
            lambda: [r.key for r in view.model.rows] == [r.key for r in pages.first(view.filter, 200)],
            20,
            "the new filter's rows, the live ones on top",
        )
        keys = [r.key for r in view.model.rows]
        assert len(keys) == len(set(keys)) and keys[0].time_ms > left[0].time_ms

    try:
        run_async(qloop, scenario())
    finally:
        if isinstance(view.pages, HeldPages):
            view.pages.let_go()
