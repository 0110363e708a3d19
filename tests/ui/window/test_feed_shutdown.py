"""Once the window shuts down, a commit or a query that still arrives starts no new work: at quit a task reading
new rows was left pending on the loop (a commit came while the window cancelled its tasks, and restarted the head
timer). A query read from a store closed under it (its tenant removed) ends quietly; one read while the store is
opened again by its writer is read again."""

from __future__ import annotations

import asyncio

import pytest

from helpers.entity_stores import write_store
from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, signal_future, until
from helpers.held_reads import HeldFirstPage
from tenant_events.errors import StorageError
from tenant_events.store import EventFilter, EventReader
from tenant_events.ui.window.main_window import MainWindow
from tenant_events.values.events import StoredEvent
from tenant_events.view.tenant_reader import TenantReader

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


def test_a_commit_after_shutdown_starts_nothing(qloop, open_window, tmp_path):
    path = tmp_path / "acme.sqlite3"
    write_store(path, 50, seed=3)
    w = open_window(path)
    feed = w.feed
    run_async(qloop, feed.shutdown())
    feed.events_stored("acme")
    feed.schedule_aggregates(now=True)
    assert not feed._head_timer.isActive() and not feed._aggregate_timer.isActive()
    feed._advance_head()
    assert len(feed.tasks) == 0


def test_a_query_after_shutdown_reads_nothing(qloop, open_window, tmp_path):
    """The filter bar's query may still be applied while the app quits (its pause timer): its first page must not
    be read from a store the app is closing (a task failing on the closed store, its error never taken)."""
    path = tmp_path / "acme.sqlite3"
    write_store(path, 50, seed=3)
    w = open_window(path)

    async def quit_then_query() -> None:
        await w.shutdown()
        w.filter_bar.search.setText("user:ada")
        w.filter_bar.search.returnPressed.emit()
        assert len(w.first_page._tasks) == 0 and not w.first_page.busy

    run_async(qloop, quit_then_query())


def test_a_query_of_a_tenant_removed_while_it_is_read_ends_quietly(qloop, qtbot, tmp_path):
    """The tenant goes (its store closed) while a query's first page is read: the read ends without an error
    left on the loop, and the other tenant's table is shown."""
    paths = {name: tmp_path / f"{name}.sqlite3" for name in ("acme", "globex")}
    for k, path in enumerate(paths.values()):
        write_store(path, 50, seed=3 + k)
    readers = [EventReader(path) for path in paths.values() for _ in range(2)]
    held = HeldFirstPage(EventReader(paths["acme"]))
    w = MainWindow(str(tmp_path / "window.ini"))
    w.show()

    async def scenario() -> None:
        updated = signal_future(w.aggregates_updated)
        w.add_tenant("acme", TenantReader(readers[0]), TenantReader(readers[1]), held)
        await updated
        w.add_tenant("globex", TenantReader(readers[2]), TenantReader(readers[3]))
        held.holding = True
        w.filter_bar.search.setText("user:ada")
        w.filter_bar.search.returnPressed.emit()
        await until(held.reading.is_set, 10, "the query's first page being read")
        reading = list(w.first_page._tasks)
        w.remove_tenant("acme")
        held.close()  # what the app does with a removed tenant's readers
        held.release.set()
        await asyncio.gather(*reading, return_exceptions=True)
        assert all(not t.cancelled() and t.exception() is None for t in reading)
        await until(lambda: w.tenant == "globex" and not w.first_page.busy, 10, "globex shown")

    try:
        run_async(qloop, scenario())
    finally:
        held.release.set()
        run_async(qloop, w.shutdown())
        w.close()
        for reader in readers:
            reader.close()


class ReopenedUnder(TenantReader):
    """A real reader whose next `fails` first pages meet the store being opened again by its writer."""

    def __init__(self, reader: EventReader) -> None:
        super().__init__(reader)
        self.fails = 0

    def page(self, flt: EventFilter, max_seq: int, offset: int, limit: int) -> list[StoredEvent]:
        if self.fails:
            self.fails -= 1
            raise StorageError("the event database acme.sqlite3 is being opened again")
        return super().page(flt, max_seq, offset, limit)


def test_a_query_read_while_the_store_is_opened_again_shows_its_rows(qloop, qtbot, tmp_path):
    """The writer opens its file again (a moment): a query's first page read meanwhile is read again, not lost
    with the old rows left under the new query."""
    path = tmp_path / "acme.sqlite3"
    write_store(path, 50, seed=3)
    readers = [EventReader(path), EventReader(path)]
    search = ReopenedUnder(EventReader(path))
    w = MainWindow(str(tmp_path / "window.ini"))
    w.show()

    async def scenario() -> None:
        updated = signal_future(w.aggregates_updated)
        w.add_tenant("acme", TenantReader(readers[0]), TenantReader(readers[1]), search)
        await updated
        search.fails = 2
        w.filter_bar.search.setText("type:user.created")
        w.filter_bar.search.returnPressed.emit()
        await until(lambda: not w.first_page.busy, 10, "the query's rows")
        assert search.fails == 0 and w.model.event_filter.query == "type:user.created"
        assert w.model.rowCount() > 0 and {w.model.event_at(r).type for r in range(w.model.rowCount())} == {
            "user.created"
        }

    try:
        run_async(qloop, scenario())
    finally:
        run_async(qloop, w.shutdown())
        w.close()
        search.close()
        for reader in readers:
            reader.close()
