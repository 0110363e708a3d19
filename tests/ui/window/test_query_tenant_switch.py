"""Showing another tenant while a query is active reads its count and first page on a worker, as typing the query
does: a leading-wildcard term (`user:*son`) scans the whole store, and on the UI thread the window would freeze
for it. Meanwhile the table is empty and says "Searching…". The same holds for a tenant added while a query is
active (it becomes the shown one).

The stores are real; their readers note which thread reads a query and hold each such read until a timer on the
UI thread has ticked: a read on the UI thread never sees the tick (it blocks the loop), so the test fails there.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QTimer

from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, signal_future, until
from helpers.query_model import simulated_rows, write
from tenant_events.store import EventFilter, EventReader
from tenant_events.ui.window.main_window import MainWindow
from tenant_events.ui.window.table.first_page import SEARCHING
from tenant_events.values.events import StoredEvent
from tenant_events.view.tenant_reader import TenantReader

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]

QUERY = "user:*n"  # no index can help: every stored event's fields are read (~450 of 2,500 match: > 1 page)
TICK_WAIT_S = 3.0


class NotedReader(TenantReader):
    """A real tenant reader; a query's count or page notes (read, on the UI thread?, a UI tick seen meanwhile?)."""

    def __init__(self, reader: EventReader, ticked: threading.Event) -> None:
        super().__init__(reader)
        self.ticked = ticked
        self.watching = False
        self.reads: list[tuple[str, bool, bool]] = []

    def _note(self, what: str, flt: EventFilter) -> None:
        if self.watching and flt.query:
            on_ui = threading.current_thread() is threading.main_thread()
            self.reads.append((what, on_ui, self.ticked.wait(TICK_WAIT_S)))

    def count(self, flt: EventFilter, max_seq: int, min_seq: int = 0) -> int:
        self._note("count", flt)
        return super().count(flt, max_seq, min_seq)

    def page(self, flt: EventFilter, max_seq: int, offset: int, limit: int) -> list[StoredEvent]:
        self._note("page", flt)
        return super().page(flt, max_seq, offset, limit)


class Tenants:
    def __init__(self, tmp_path: Path) -> None:
        self.ticked = threading.Event()
        self.readers: list[EventReader] = []
        self.tenant_readers: dict[str, tuple[NotedReader, NotedReader]] = {}
        for seed, name in enumerate(("acme", "beta"), start=3):
            path = tmp_path / f"{name}.sqlite3"
            write(path, simulated_rows(2500, seed=seed))
            ui, worker = EventReader(path), EventReader(path)
            self.readers += [ui, worker]
            self.tenant_readers[name] = (NotedReader(ui, self.ticked), NotedReader(worker, self.ticked))

    def watch(self) -> None:
        self.ticked.clear()
        for both in self.tenant_readers.values():
            for p in both:
                p.watching, p.reads = True, []

    def unwatch(self) -> None:
        for both in self.tenant_readers.values():
            for p in both:
                p.watching = False

    def reads(self, name: str) -> list[tuple[str, bool, bool]]:
        return [r for p in self.tenant_readers[name] for r in p.reads]

    def close(self) -> None:
        for r in self.readers:
            r.close()


@pytest.fixture
def setup(qtbot: Any, qloop: Any, tmp_path: Path) -> Iterator[tuple[MainWindow, Tenants]]:
    tenants = Tenants(tmp_path)
    w = MainWindow(str(tmp_path / "window.ini"))
    w.show()
    yield w, tenants
    run_async(qloop, w.shutdown())
    w.close()
    w.deleteLater()
    tenants.close()


def type_query(w: MainWindow, text: str) -> None:
    w.filter_bar.search.setText(text)
    w.filter_bar.search.returnPressed.emit()


def ui_ticks(tenants: Tenants) -> QTimer:
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(tenants.ticked.set)
    timer.start()
    return timer


def matches(tenants: Tenants, name: str) -> list[int]:
    ui_reader, _ = tenants.tenant_readers[name]
    return [e.seq for e in ui_reader.reader.page_before(EventFilter(query=QUERY), None, 5000)]


async def shown_and_counted(w: MainWindow, want: list[int]) -> None:
    await w.first_page.wait()
    await until(lambda: not w.model.counting, 10, "the total")
    await until(lambda: w.filter_bar.count_label.text() == f"{len(want):,} events", 10, "the count")


def assert_read_on_worker(w: MainWindow, tenants: Tenants, name: str, want: list[int]) -> None:
    reads = tenants.reads(name)
    tenants.unwatch()  # rows past the first page are read on demand (on the UI thread, as for a typed query)
    assert {what for what, _, _ in reads} >= {"page", "count"}, reads  # its first page and its total
    assert not [r for r in reads if r[1]], f"read on the UI thread: {reads}"
    assert all(seen for _, _, seen in reads), f"the UI thread did not tick during a read: {reads}"
    assert 256 < len(want) < 2500
    assert w.tenant == name and w.model.event_filter.query == QUERY
    shown = [ev.seq for r in range(w.model.rowCount()) if (ev := w.model.event_at(r)) is not None]
    assert w.model.rowCount() == len(want) and shown == want


def test_switching_tenants_with_a_query_active_reads_on_a_worker(qloop: Any, setup: Any) -> None:
    w, tenants = setup

    async def scenario() -> None:
        updated = signal_future(w.aggregates_updated)
        for name, (ui, worker) in tenants.tenant_readers.items():
            w.add_tenant(name, ui, worker)
        await updated
        updated = signal_future(w.aggregates_updated)
        type_query(w, QUERY)
        await updated
        assert w.tenant == "acme" and w.model.rowCount() > 0
        tenants.watch()
        timer = ui_ticks(tenants)
        try:
            w.show_tenant("beta")
            assert not [r for r in tenants.reads("beta") if r[1]], "read on the UI thread (no tick meanwhile)"
            # back on the UI thread at once: the table waits, empty, and says it is searching
            assert w.first_page.busy and w.model.rowCount() == 0
            assert w.filter_bar.count_label.text() == SEARCHING
            await shown_and_counted(w, want)
        finally:
            timer.stop()

    want = matches(tenants, "beta")
    run_async(qloop, scenario())
    assert_read_on_worker(w, tenants, "beta", want)


def test_a_tenant_added_while_a_query_is_active_is_read_on_a_worker(qloop: Any, setup: Any) -> None:
    w, tenants = setup

    async def scenario() -> None:
        type_query(w, QUERY)  # no tenant yet: nothing to read
        assert w.model.event_filter.query == QUERY and w.model.rowCount() == 0
        tenants.watch()
        timer = ui_ticks(tenants)
        try:
            ui, worker = tenants.tenant_readers["acme"]
            w.add_tenant("acme", ui, worker)
            assert not [r for r in tenants.reads("acme") if r[1]], "read on the UI thread (no tick meanwhile)"
            assert w.first_page.busy and w.model.rowCount() == 0
            assert w.filter_bar.count_label.text() == SEARCHING
            await shown_and_counted(w, want)
        finally:
            timer.stop()

    want = matches(tenants, "acme")
    run_async(qloop, scenario())
    assert_read_on_worker(w, tenants, "acme", want)


def test_opening_another_tenants_event_with_a_query_active_keeps_it_selected(qloop: Any, setup: Any) -> None:
    """A clicked notification's event is read with the query's snapshot that shows it, and no read left pending
    (the tenant's first page) replaces the table (and the selection) afterwards."""
    w, tenants = setup
    target = matches(tenants, "beta")[300]  # on the second page of beta's matches

    async def scenario() -> None:
        updated = signal_future(w.aggregates_updated)
        for name, (ui, worker) in tenants.tenant_readers.items():
            w.add_tenant(name, ui, worker)
        await updated
        updated = signal_future(w.aggregates_updated)
        type_query(w, QUERY)
        await updated
        opening = w.select_event("beta", target)
        assert opening is not None
        await opening
        await w.first_page.wait()
        await until(lambda: not w.model.counting, 10, "the total")

    run_async(qloop, scenario())
    assert w.tenant == "beta" and w.model.event_filter.query == QUERY
    current = w.model.event_at(w.table.currentIndex().row())
    assert current is not None and current.seq == target
    assert w.detail.shown is not None and w.detail.shown.seq == target
