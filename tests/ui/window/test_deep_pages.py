"""Deep pages before the page keys exist (a scrollbar jump right after a filter change): read by an estimated
key, never by a deep OFFSET; placed exactly once the keys arrive, with the selection following its event."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QItemSelectionModel, QPersistentModelIndex

from helpers.events_factory import row
from tenant_events.store import Batch, EventReader, StoreWriter
from tenant_events.store.records import EventFilter, StoredEvent
from tenant_events.ui.window.table.event_table_model import PAGE, Col, EventTableModel
from tenant_events.view.page_cache import EXACT_OFFSET_ROWS
from tenant_events.view.tenant_reader import TenantReader

N = 30_000
SKEWED = EventFilter(types=frozenset({"user.deleted"}))


class CountingReader(TenantReader):
    """The real store port, noting the OFFSET reads (what made a deep jump slow)."""

    def __init__(self, reader: EventReader) -> None:
        super().__init__(reader)
        self.offsets: list[int] = []

    def page(self, flt: EventFilter, max_seq: int, offset: int, limit: int) -> list[StoredEvent]:
        self.offsets.append(offset)
        return super().page(flt, max_seq, offset, limit)


@pytest.fixture(scope="module")
def skewed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """N events; user.deleted is every 3rd event in the older half and every 40th in the newer one, so a
    straight line from the newest to the oldest match misplaces the middle by thousands of rows."""
    path = tmp_path_factory.mktemp("deep") / "acme.sqlite3"
    writer = StoreWriter(path)
    for start in range(0, N, 5000):
        rows = [
            row(i, type_="user.deleted" if i % (3 if i < N // 2 else 40) == 0 else "user.created")
            for i in range(start, start + 5000)
        ]
        writer.commit_sync(Batch(events=rows, cursor=rows[-1].offset))
    writer.index_all_sync()
    writer.close()
    return path


def truth(reader: EventReader, flt: EventFilter, r: int) -> int:
    return reader.page(flt, r, 1)[0].seq


@pytest.mark.parametrize(
    "flt", [EventFilter(), SKEWED, EventFilter(query="type:user.deleted OR user:user12")]
)
def test_a_deep_jump_reads_by_key_not_by_offset(qapp, skewed, flt):
    with EventReader(skewed) as reader:
        tenant_reader = CountingReader(reader)
        model = EventTableModel()
        model.set_reader(tenant_reader, flt)
        total = model.rowCount()
        assert total == reader.count(flt) > 10 * PAGE
        for r in (total // 2, total // 3 + 17, total - 3 * PAGE - 5, total - 1, 5):
            ev = model.event_at(r)
            assert ev is not None and reader.page_before(flt, ev.seq + 1, 1)[0].seq == ev.seq  # it matches
        assert max(tenant_reader.offsets) <= EXACT_OFFSET_ROWS  # no deep OFFSET walked
        assert model.event_at(total - 1).seq == truth(reader, flt, total - 1)  # the ends are exact
        assert model.event_at(5).seq == truth(reader, flt, 5)
        # rows on and around an estimated page follow each other like the stored rows do
        mid = total // 2
        shown = [model.event_at(r).seq for r in range(mid - PAGE, mid + PAGE)]  # type: ignore[union-attr]
        first = shown[0]
        want = [first] + [e.seq for e in reader.page_before(flt, first, len(shown) - 1)]
        assert shown == want


def test_the_keys_make_every_row_exact_and_the_selection_follows(qtbot, qtmodeltester, skewed):
    with EventReader(skewed) as reader:
        tenant_reader = TenantReader(reader)
        model = EventTableModel(tenant_reader)
        model.set_filter(SKEWED)
        total = model.rowCount()
        mid = total // 2
        estimated = model.event_at(mid)
        assert estimated is not None
        off = abs(reader.count(SKEWED, min_seq=estimated.seq + 1) - mid)
        assert off > PAGE  # the skew misplaced it: the test below has something to correct
        selection = QItemSelectionModel(model)
        selection.setCurrentIndex(model.index(mid, Col.ID), QItemSelectionModel.SelectionFlag.ClearAndSelect)
        kept = QPersistentModelIndex(model.index(mid, Col.TYPE))
        with qtbot.waitSignal(model.layoutChanged):
            assert model.set_anchors(
                model.generation, model.head, tenant_reader.anchors(SKEWED, model.head, PAGE)
            )
        # the selected event is still selected, at its true row
        assert selection.currentIndex().row() == kept.row() != mid
        assert model.event_at(kept.row()).seq == estimated.seq  # type: ignore[union-attr]
        assert kept.row() == reader.count(SKEWED, min_seq=estimated.seq + 1)
        for r in (0, mid, total // 3, total - 1, mid - 300):
            assert model.event_at(r).seq == truth(reader, SKEWED, r)  # type: ignore[union-attr]
        qtmodeltester.check(model, force_py=True)


def test_row_of_seq_is_exact_on_an_estimated_page(qapp, skewed):
    with EventReader(skewed) as reader:
        model = EventTableModel(TenantReader(reader))
        model.set_filter(SKEWED)
        mid = model.rowCount() // 2
        model.event_at(mid)  # an estimated page where the true one belongs
        true = truth(reader, SKEWED, mid)
        assert model.row_of_seq(true) == mid
        assert model.event_at(mid).seq == true and model.event_at(mid + 1).seq == truth(
            reader, SKEWED, mid + 1
        )  # type: ignore[union-attr]
        unfiltered = reader.page(EventFilter(types=frozenset({"user.created"})), 10, 1)[0].seq
        assert model.row_of_seq(unfiltered) is None


def test_new_rows_on_top_keep_deep_rows_right(qapp, tmp_path):
    path = tmp_path / "acme.sqlite3"
    writer = StoreWriter(path)
    writer.commit_sync(Batch(events=[row(i) for i in range(6000)], cursor="a"))
    with EventReader(path) as reader:
        model = EventTableModel(TenantReader(reader))
        model.reload()
        before = model.event_at(3000)
        writer.commit_sync(Batch(events=[row(10_000 + i) for i in range(10)], cursor="b"))
        assert model.advance_head() == 10
        assert model.event_at(3010).seq == before.seq  # type: ignore[union-attr]
        assert model.event_at(3010).seq == truth(reader, EventFilter(), 3010)  # type: ignore[union-attr]
    writer.close()
