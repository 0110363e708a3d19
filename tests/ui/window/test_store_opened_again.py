"""The window while the store is being opened again (another program removed a file of the database): a read
that is refused for a moment ends nothing — the count and histogram shown stay, and are read again shortly,
without waiting for a commit that a paused stream does not make."""

from __future__ import annotations

import pytest

from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, signal_future
from tenant_events.errors import StorageError
from tenant_events.store import EventReader
from tenant_events.values.events import EventFilter
from tenant_events.view.tenant_reader import TenantReader

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


class OpenedAgainMeanwhile(TenantReader):
    """A worker reader whose first aggregate read meets the database being opened again."""

    refusals = 1

    def counts_by_type(self, flt: EventFilter) -> dict[str, int]:
        if self.refusals:
            self.refusals -= 1
            raise StorageError("globex.sqlite3-wal was removed", "try again in a moment")
        return super().counts_by_type(flt)


def test_an_aggregates_pass_refused_while_the_store_reopens_is_read_again(open_window, filled_store, qloop):
    w = open_window(filled_store(300))
    other = filled_store(120, name="globex")
    ui, worker = EventReader(other), OpenedAgainMeanwhile(EventReader(other))
    try:

        async def show_globex() -> None:
            updated = signal_future(w.aggregates_updated, 30)
            w.add_tenant("globex", TenantReader(ui), worker)
            w.show_tenant("globex")
            await updated  # the refused pass is tried again by itself: no commit comes

        run_async(qloop, show_globex())
        assert worker.refusals == 0
        assert w.filter_bar._count_text == "120 events"
        assert sum(sum(b.values()) for _, b in w.histogram.buckets) == 120
    finally:
        w.remove_tenant("globex")
        ui.close()
        worker.close()


class PagesRefusedOnce(TenantReader):
    refusals = 1

    def page(self, flt: EventFilter, max_seq: int, offset: int, limit: int):
        if self.refusals:
            self.refusals -= 1
            raise StorageError("acme.sqlite3-wal was removed", "try again in a moment")
        return super().page(flt, max_seq, offset, limit)


def test_a_page_refused_while_the_store_reopens_is_blank_until_read_again(filled_store):
    from tenant_events.view.page_cache import PageCache

    with EventReader(filled_store(300)) as reader:
        cache, pages = PageCache(), PagesRefusedOnce(reader)
        cache.reset(pages, EventFilter(), pages.head_seq())
        cache.rows = 300
        assert cache.event(0) is None and cache.pages == {}  # not raised into Qt's paint, nothing kept
        assert cache.event(0) is not None and cache.event(0).seq == 300
