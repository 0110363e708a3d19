"""A scrollbar jump right after a filter change reads nothing slow on the UI thread: the oldest matching row,
which the first estimated jump needs (and which can take a full scan to find: a time range scans up from the
oldest row), is read on the worker with the total; the last rows are read from it, not from seq 0."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, signal_future, until
from helpers.query_model import simulated_rows, write
from tenant_events.store import EventFilter, EventReader
from tenant_events.ui.window.main_window import MainWindow
from tenant_events.ui.window.table.event_table_model import PAGE, EventTableModel
from tenant_events.ui.window.table.first_page import count_and_oldest
from tenant_events.view.tenant_reader import TenantReader

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]
N = 12000
START = datetime(2026, 3, 1, tzinfo=UTC)  # simulated_rows: one event a second from here
SINCE = EventFilter(since=START + timedelta(seconds=N - 8000))  # the newest 8,000: 32 pages


class ReadsFromTheBottom(TenantReader):
    """The real reader, noting each read that walks up from the oldest row (seq 0)."""

    def __init__(self, reader: EventReader) -> None:
        super().__init__(reader)
        self.from_bottom = 0

    def newer(self, flt, after_seq, max_seq, limit):
        self.from_bottom += after_seq == 0
        return super().newer(flt, after_seq, max_seq, limit)


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "acme.sqlite3"
    write(path, simulated_rows(N))
    readers = [EventReader(path), EventReader(path)]
    yield path, readers
    for r in readers:
        r.close()


def test_deep_and_last_rows_after_a_time_filter_read_nothing_from_the_bottom(qapp, store):
    _, (ui_reader, worker_reader) = store
    tenant_reader = ReadsFromTheBottom(ui_reader)
    model = EventTableModel(tenant_reader)
    model.set_filter(SINCE, count_later=True)  # the first page now, the total on the worker
    assert model.counting and model.rowCount() == PAGE
    total, oldest = count_and_oldest(TenantReader(worker_reader), SINCE, model.head)  # what the worker does
    assert total == 8000 and oldest == worker_reader.page_before(SINCE, None, N)[-1].seq
    model.apply_total(model.generation, total, oldest)
    tenant_reader.from_bottom = 0
    middle, last = model.event_at(total // 2), model.event_at(total - 1)  # deep: estimated; last: the tail
    assert middle is not None and last is not None and last.seq == oldest
    assert tenant_reader.from_bottom == 0  # neither read walked up from seq 0 on the UI thread
    # without the warm-up the same jump looks the oldest match up itself, from the bottom
    cold = EventTableModel(ReadsFromTheBottom(ui_reader))
    cold.set_filter(SINCE, count_later=True)
    cold.apply_total(cold.generation, total)
    cold._reader.from_bottom = 0
    cold.event_at(total // 2)
    assert cold._reader.from_bottom == 1


def test_the_window_warms_the_oldest_match_with_the_total(qloop, store, tmp_path):
    _, (ui_reader, worker_reader) = store
    w = MainWindow(str(tmp_path / "window.ini"))
    w.show()
    tenant_reader = ReadsFromTheBottom(ui_reader)

    async def scenario() -> None:
        updated = signal_future(w.aggregates_updated)
        w.add_tenant("acme", tenant_reader, TenantReader(worker_reader))
        await updated
        w.apply_filter_now(SINCE)
        await until(lambda: not w.model.counting, 10, "the total")
        tenant_reader.from_bottom = 0
        bar = w.table.verticalScrollBar()
        for value in (bar.maximum() // 3, bar.maximum() // 2, bar.maximum()):  # jumps, before the page keys
            bar.setValue(value)
            w.table.viewport().repaint()
        assert tenant_reader.from_bottom == 0
        await w.shutdown()

    run_async(qloop, scenario())
    w.close()
    w.deleteLater()
