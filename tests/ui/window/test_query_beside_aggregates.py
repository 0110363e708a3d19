"""A query's first page has its own reader: it never waits behind an aggregates pass (counts per type, histogram,
page keys) over the whole store, which on 1M events holds the aggregates reader for seconds."""

from __future__ import annotations

import threading

import pytest

from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, signal_future, until
from helpers.query_model import simulated_rows, write
from tenant_events.store import EventReader
from tenant_events.ui.window.main_window import MainWindow
from tenant_events.view.tenant_reader import TenantReader

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


def test_a_query_first_page_is_shown_while_the_aggregates_reader_is_busy(qtbot, qloop, tmp_path):
    path = tmp_path / "acme.sqlite3"
    write(path, simulated_rows(3000))
    readers = [EventReader(path) for _ in range(3)]
    ui_reader, worker_reader, search_reader = (TenantReader(r) for r in readers)
    w = MainWindow(str(tmp_path / "window.ini"))
    w.show()
    release = threading.Event()
    held = threading.Event()

    def busy_aggregates() -> None:  # what a long pass does: it holds the worker reader (aggregates)
        with readers[1]._lock:  # the worker reader's connection lock
            held.set()
            release.wait(30)

    async def scenario() -> None:
        updated = signal_future(w.aggregates_updated)
        w.add_tenant("acme", ui_reader, worker_reader, search_reader)
        await updated
        holder = threading.Thread(target=busy_aggregates)
        holder.start()
        try:
            assert held.wait(5)
            w.filter_bar.search.setText("type:user.*")
            w.filter_bar.search.returnPressed.emit()
            # the first page arrives although the aggregates reader is taken the whole time
            await until(lambda: not w.first_page.busy, wait_s=5, what="the first page")
            assert w.model.event_filter.query == "type:user.*"
            first = w.model.event_at(0)
            assert first is not None and first.type.startswith("user.")
        finally:
            release.set()
            holder.join()

    try:
        run_async(qloop, scenario())
    finally:
        run_async(qloop, w.shutdown())
        w.close()
        w.deleteLater()
        for r in readers:
            r.close()
