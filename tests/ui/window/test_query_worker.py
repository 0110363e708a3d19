"""A query's first page is read on a worker thread, not on the UI thread: a leading-wildcard term (`user:*ville`,
a full scan of the store) leaves the window responsive, with the old rows shown and "Searching…" until the
rows arrive; a query typed on replaces the one still being read, and a filter applied meanwhile wins."""

from __future__ import annotations

import pytest

from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, signal_future, until
from helpers.query_model import simulated_rows, write
from tenant_events.store import EventFilter, EventReader
from tenant_events.ui.window.main_window import MainWindow
from tenant_events.ui.window.table.first_page import SEARCHING
from tenant_events.view.tenant_reader import TenantReader

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


@pytest.fixture
def window(qtbot, qloop, tmp_path):
    path = tmp_path / "acme.sqlite3"
    write(path, simulated_rows(3000))
    reader, stats = EventReader(path), EventReader(path)
    w = MainWindow(str(tmp_path / "window.ini"))
    w.show()

    async def load() -> None:
        updated = signal_future(w.aggregates_updated)
        w.add_tenant("acme", TenantReader(reader), TenantReader(stats))
        await updated

    run_async(qloop, load())
    yield w, reader
    run_async(qloop, w.shutdown())
    w.close()
    w.deleteLater()
    reader.close()
    stats.close()


def type_query(w: MainWindow, text: str) -> None:
    w.filter_bar.search.setText(text)
    w.filter_bar.search.returnPressed.emit()


def shown_seqs(w: MainWindow) -> list[int]:
    return [w.model.event_at(r).seq for r in range(w.model.rowCount())]  # type: ignore[union-attr]


def test_a_leading_wildcard_query_runs_on_a_worker_with_a_busy_state(qloop, window):
    w, reader = window
    before_rows, before_filter = w.model.rowCount(), w.model.event_filter
    query = "user:*son"  # no index can help: every stored event's fields are read

    async def scenario() -> None:
        updated = signal_future(w.aggregates_updated)
        type_query(w, query)
        # back on the UI thread at once: nothing read yet, the old rows still shown, and it says so
        assert w.first_page.busy
        assert w.model.event_filter == before_filter and w.model.rowCount() == before_rows
        assert w.filter_bar.count_label.text() == SEARCHING
        assert w.table.viewport().cursor().shape().name == "BusyCursor"
        await updated  # first page, then the count and the aggregates, all on workers
        assert not w.first_page.busy
        assert w.table.viewport().cursor().shape().name != "BusyCursor"

    run_async(qloop, scenario())
    want = reader.page_before(EventFilter(query=query), None, 5000)
    assert 0 < len(want) < before_rows
    assert w.model.event_filter.query == query
    assert shown_seqs(w) == [e.seq for e in want]
    assert w.filter_bar.count_label.text() == f"{len(want):,} events"


def test_a_newer_query_replaces_the_one_being_read_and_a_filter_change_wins(qloop, window):
    w, reader = window

    async def typed_on() -> None:
        type_query(w, "user:*son")
        type_query(w, "type:user.deleted")  # typed on before the first one's rows arrived
        await w.first_page.wait()
        await until(lambda: not w.model.counting, 10, "the total")

    run_async(qloop, typed_on())
    want = reader.page_before(EventFilter(query="type:user.deleted"), None, 5000)
    assert w.model.event_filter.query == "type:user.deleted" and shown_seqs(w) == [e.seq for e in want]

    async def filter_meanwhile() -> None:
        type_query(w, "user:*ville OR user:*son")
        assert w.first_page.busy
        w.filter_bar.search.clear()
        w.filter_bar.search.returnPressed.emit()  # an empty query: applied at once, the read is dropped
        assert not w.first_page.busy and w.model.event_filter.query == ""
        await w.first_page.wait()  # the dropped read ends without touching the table
        await until(lambda: not w.model.counting, 10, "the total of all events")

    run_async(qloop, filter_meanwhile())
    assert w.model.event_filter.query == "" and w.model.rowCount() == 3000
