"""A tenant's counts and histogram are shown as soon as they are read, not once its page keys are: over a
30M-event year the keys (a scan numbering every match) take most of the aggregates pass."""

from __future__ import annotations

import threading

import pytest

from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, signal_future, until
from helpers.query_model import simulated_rows, write
from tenant_events.store import EventReader
from tenant_events.ui.window.main_window import MainWindow
from tenant_events.values.events import EventFilter
from tenant_events.view.tenant_reader import TenantReader

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


class SlowKeys(TenantReader):
    """A real reader whose page keys are read only once the test lets them (a year's long scan)."""

    def __init__(self, reader: EventReader) -> None:
        super().__init__(reader)
        self.asked = threading.Event()
        self.go = threading.Event()

    def anchors(self, flt: EventFilter, max_seq: int, every: int) -> list[int]:
        self.asked.set()
        self.go.wait(30)
        return super().anchors(flt, max_seq, every)


def test_counts_and_histogram_show_while_the_page_keys_are_still_read(qtbot, qloop, tmp_path):
    path = tmp_path / "acme.sqlite3"
    write(path, simulated_rows(3000))
    readers = [EventReader(path) for _ in range(3)]
    worker = SlowKeys(readers[1])
    w = MainWindow(str(tmp_path / "window.ini"))
    w.show()

    async def scenario() -> None:
        updated = signal_future(w.aggregates_updated)
        w.add_tenant("acme", TenantReader(readers[0]), worker, TenantReader(readers[2]))
        try:
            await until(worker.asked.is_set, wait_s=20, what="the page keys asked for")
            await until(lambda: w.histogram.buckets, wait_s=5, what="the histogram, before the page keys")
            assert sum(sum(b.values()) for _, b in w.histogram.buckets) == 3000
            assert "3,000 events" in w.filter_bar.count_label.text()
            assert not w.model.has_anchors
        finally:
            worker.go.set()
        await updated  # "updated" once the page keys are in too
        assert w.model.has_anchors

    try:
        run_async(qloop, scenario())
    finally:
        worker.go.set()
        run_async(qloop, w.shutdown())
        w.close()
        w.deleteLater()
        for r in readers:
            r.close()
