"""The lazy table model over a real store: qtmodeltester, paging, filters in SQL, new rows at the top."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt

from helpers.events_factory import row
from tenant_events.store import Batch, EventReader, StoreWriter
from tenant_events.ui.window.table.event_table_model import (
    KEPT_HEADS,
    MAX_PAGES,
    PAGE,
    Col,
    EventTableModel,
)
from tenant_events.values.events import EventFilter
from tenant_events.view.tenant_reader import TenantReader


def test_model_passes_qtmodeltester(qtmodeltester, filled_store):
    reader = EventReader(filled_store(600))
    model = EventTableModel(TenantReader(reader))
    model.reload()
    assert model.rowCount() == 600
    qtmodeltester.check(model, force_py=True)
    model.set_filter(EventFilter(types=frozenset({"user.created"})))
    qtmodeltester.check(model, force_py=True)
    reader.close()


def test_newest_first_and_cells(qapp, filled_store):
    reader = EventReader(filled_store(100))
    model = EventTableModel(TenantReader(reader))
    model.reload()
    top = model.event_at(0)
    assert top is not None and top.seq == 100
    assert model.data(model.index(0, Col.TYPE)) == top.type
    assert model.data(model.index(0, Col.ID)) == top.event_id
    assert model.data(model.index(0, Col.TIME), Qt.ItemDataRole.ToolTipRole).endswith("(UTC)")
    assert model.headerData(Col.SUMMARY, Qt.Orientation.Horizontal) == "Summary"
    assert model.data(model.index(0, Col.TYPE), Qt.ItemDataRole.ForegroundRole) is not None
    reader.close()


def test_pages_are_bounded_for_a_large_store(qapp, filled_store):
    reader = EventReader(filled_store(20_000))
    model = EventTableModel(TenantReader(reader))
    model.reload()
    assert model.rowCount() == 20_000
    for r in range(0, 20_000, 397):
        ev = model.event_at(r)
        assert ev is not None and ev.seq == 20_000 - r
    assert len(model._cache.pages) <= MAX_PAGES
    last = model.event_at(19_999)
    assert last is not None and last.seq == 1
    reader.close()


def test_filters_run_in_the_store(qapp, filled_store):
    reader = EventReader(filled_store(2200))
    model = EventTableModel(TenantReader(reader))
    model.reload()
    model.set_filter(EventFilter(types=frozenset({"user.deleted", "group.deleted"})))
    assert model.rowCount() == 200  # 22 types rotate: 100 each
    assert {model.event_at(r).type for r in range(model.rowCount())} == {"user.deleted", "group.deleted"}
    from tenant_events.wire import EventType

    i = next(i for i in range(22) if list(EventType)[i].value.startswith("user."))
    model.set_filter(EventFilter(text=f"user{i}@example.com"))
    assert model.rowCount() == 1
    assert f"user{i}@example.com" in reader.get(model.event_at(0).seq).raw
    reader.close()


def test_new_rows_arrive_at_the_top_and_the_read_row_keeps_its_identity(qtbot, filled_store, tmp_path):
    path = filled_store(PAGE * 3)
    reader = EventReader(path)
    model = EventTableModel(TenantReader(reader))
    model.reload()
    reading = model.index(300, Col.ID)
    reading_id = model.data(reading)
    persistent = __import__("PySide6.QtCore", fromlist=["QPersistentModelIndex"]).QPersistentModelIndex(
        reading
    )
    writer = StoreWriter(path)
    # a row stored between two head advances is not shown until advance_head(): the snapshot is stable
    writer.commit_sync(Batch(events=[row(10_000 + i) for i in range(5)], cursor="x"))
    assert model.rowCount() == PAGE * 3
    assert model.data(model.index(300, Col.ID)) == reading_id
    with qtbot.waitSignal(model.rowsInserted) as blocker:
        assert model.advance_head() == 5
    assert blocker.args[1:] == [0, 4]
    assert model.rowCount() == PAGE * 3 + 5
    assert persistent.row() == 305 and model.data(model.index(305, Col.ID)) == reading_id
    assert model.event_at(0).seq == PAGE * 3 + 5
    # rows filtered out do not count as arrivals
    model.set_filter(EventFilter(types=frozenset({"group.deleted"})))
    before = model.rowCount()
    writer.commit_sync(Batch(events=[row(20_000, type_="user.created")], cursor="y"))
    assert model.advance_head() == 0 and model.rowCount() == before
    writer.close()
    reader.close()


def test_row_of_seq(qapp, filled_store):
    reader = EventReader(filled_store(1000))
    model = EventTableModel(TenantReader(reader))
    model.reload()
    assert model.row_of_seq(1000) == 0
    assert model.row_of_seq(1) == 999
    model.set_filter(EventFilter(types=frozenset({"user.created"})))
    target = model.event_at(7)
    assert model.row_of_seq(target.seq) == 7
    assert model.row_of_seq(target.seq + 1) is None  # another type: filtered out
    assert model.rowCount(model.index(0, 0)) == 0 and model.rowCount(QModelIndex()) > 0
    reader.close()


def test_counting_new_rows_holds_with_duplicates_and_filters(qapp, tmp_path):
    """The unfiltered count of new rows is arithmetic on seq; it must match the store's own count."""
    path = tmp_path / "dups.sqlite3"
    writer = StoreWriter(path)
    writer.commit_sync(Batch(events=[row(i) for i in range(100)], cursor="a"))
    reader = EventReader(path)
    model = EventTableModel(TenantReader(reader))
    model.reload()
    typed = EventTableModel(TenantReader(reader))
    typed.set_filter(EventFilter(types=frozenset({"user.deleted"})))
    for round_ in range(5):
        fresh = [row(1000 + round_ * 10 + i) for i in range(10)]
        dups = [row(i) for i in range(round_ * 7, round_ * 7 + 20)]  # already stored: ignored
        deleted = [row(5000 + round_, type_="user.deleted")]
        writer.commit_sync(Batch(events=dups[:10] + fresh + dups[10:] + deleted, cursor=f"c{round_}"))
        model.advance_head()
        typed.advance_head()
        assert model.rowCount() == reader.count() == 100 + (round_ + 1) * 11
        assert typed.rowCount() == reader.count(typed.event_filter) == round_ + 1
        assert [model.event_at(r).seq for r in range(3)] == sorted(
            (e.seq for e in reader.page(limit=3)), reverse=True
        )
    writer.close()
    reader.close()


def test_keyset_neighbour_pages_match_offset_pages(qapp, filled_store):
    reader = EventReader(filled_store(PAGE * 6 + 17))
    model = EventTableModel(TenantReader(reader))
    model.reload()
    down = [model.event_at(r).seq for r in range(model.rowCount())]  # each page keyset from the one above
    model._cache.pages.clear()
    model.event_at(model.rowCount() - 1)  # start at the bottom, then walk up: keyset from the page below
    up = [model.event_at(r).seq for r in reversed(range(model.rowCount()))][::-1]
    expected = [e.seq for e in reader.page(limit=PAGE * 7)]
    assert down == up == expected
    model.set_filter(EventFilter(types=frozenset({"user.created", "group.deleted"})))
    walked = [model.event_at(r).seq for r in range(model.rowCount())]
    assert walked == [e.seq for e in reader.page(model.event_filter, limit=PAGE * 7)]
    reader.close()


def test_first_screen_first_then_the_total(qtbot, qtmodeltester, filled_store):
    """A filter shows its newest page at once; the total arrives later (counted on a worker in the app)."""
    reader = EventReader(filled_store(PAGE * 4))
    model = EventTableModel(TenantReader(reader))
    model.reload()
    with qtbot.waitSignal(model.count_needed) as needed:
        model.set_filter(EventFilter(include_test=True, text="example"), count_later=True)
    assert model.counting and model.rowCount() == PAGE
    stale = needed.args[0] - 1
    model.apply_total(stale, 10)  # a count for an older snapshot is dropped
    assert model.rowCount() == PAGE
    total = TenantReader(reader).count(model.event_filter, model.head)
    with qtbot.waitSignal(model.rowsInserted):
        model.apply_total(needed.args[0], total)
    assert not model.counting and model.rowCount() == total
    assert [model.event_at(r).seq for r in range(total)] == [
        e.seq for e in reader.page(model.event_filter, limit=total)
    ]
    qtmodeltester.check(model, force_py=True)
    with qtbot.assertNotEmitted(model.count_needed):
        model.set_filter(EventFilter(text="user1@example.com"), count_later=True)  # fewer than a page: exact
    assert not model.counting and model.rowCount() == reader.count(model.event_filter)
    reader.close()


def test_deep_pages_by_anchor_keys_match_offset_paging_also_after_new_rows(qapp, tmp_path):
    """A jump deep into the table fetches by seq key (anchors every PAGE rows, computed for an older snapshot)
    and shows exactly the rows OFFSET paging shows, with duplicates leaving holes in seq and rows added on top."""
    path = tmp_path / "acme.sqlite3"
    writer = StoreWriter(path)
    rows = [row(i, type_="user.deleted" if i % 3 == 0 else "user.created") for i in range(3000)]
    for start in range(0, 3000, 500):
        batch = rows[start : start + 500]
        writer.commit_sync(Batch(events=batch + batch[:7], cursor=f"off-{start}"))  # holes in seq
    reader = EventReader(path)
    tenant_reader = TenantReader(reader)
    for flt in (EventFilter(), EventFilter(types=frozenset({"user.deleted"}))):
        plain = EventTableModel(tenant_reader)
        plain.set_filter(flt)
        plain.reload()
        keyed = EventTableModel(tenant_reader)
        keyed.set_filter(flt)
        keyed.reload()
        snapshot = keyed.head
        anchors = tenant_reader.anchors(flt, snapshot, PAGE)
        assert len(anchors) == -(-keyed.rowCount() // PAGE)
        # rows arrive after the anchors were counted
        writer.commit_sync(
            Batch(events=[row(5000 + i) for i in range(40)] + [row(6000, type_="user.deleted")])
        )
        keyed.advance_head()
        assert keyed.set_anchors(keyed.generation, snapshot, anchors)
        plain.advance_head()
        assert keyed.rowCount() == plain.rowCount()
        for r in (keyed.rowCount() - 1, keyed.rowCount() // 2, 3 * PAGE + 5, PAGE, 1, 0):
            keyed._cache.pages.clear()  # no neighbour page: the anchor path, not the keyset-from-neighbour one
            plain._cache.pages.clear()
            a, b = keyed.event_at(r), plain.event_at(r)
            assert a is not None and b is not None and a.seq == b.seq, (flt, r)
    assert not EventTableModel(tenant_reader).set_anchors(99, 1, [1])  # another generation's keys are refused
    writer.close()
    reader.close()


def test_gap_rows_sit_between_their_neighbours_and_move_down_with_new_rows(
    qtbot, qtmodeltester, filled_store
):
    path = filled_store(100)
    reader = EventReader(path)
    model = EventTableModel(TenantReader(reader))
    model.reload()
    # 10 events are newer than the gap: the gap row is the 11th row, between seq 91 and seq 90
    with qtbot.waitSignal(model.rowsInserted) as blocker:
        assert model.set_gaps(model.head, [(10, "cursor expired")])
    assert blocker.args[1:] == [10, 10]
    assert model.rowCount() == 101 and model.event_rows == 100
    assert model.gap_rows() == [10] and model.gap_at(10) == "cursor expired"
    assert model.event_at(9).seq == 91 and model.event_at(10) is None and model.event_at(11).seq == 90
    qtmodeltester.check(model, force_py=True)
    # five new events arrive on top: the gap row moves down with its neighbours
    writer = StoreWriter(path)
    writer.commit_sync(Batch(events=[row(10_000 + i) for i in range(5)], cursor="x"))
    assert model.advance_head() == 5
    assert model.gap_rows() == [15] and model.gap_at(10) is None
    assert model.event_at(14).seq == 91 and model.event_at(15) is None and model.event_at(16).seq == 90
    # the same gap counted again for the new head is no change
    assert not model.set_gaps(model.head, [(15, "cursor expired")])
    writer.close()
    reader.close()


def test_gaps_counted_for_an_older_head_allow_for_the_rows_inserted_since(qtbot, filled_store):
    path = filled_store(100)
    reader = EventReader(path)
    model = EventTableModel(TenantReader(reader))
    model.reload()
    counted_at = model.head  # a worker counts the gaps for this snapshot...
    writer = StoreWriter(path)
    writer.commit_sync(Batch(events=[row(10_000 + i) for i in range(5)], cursor="x"))
    assert model.advance_head() == 5  # ...while five rows arrive on top
    assert model.set_gaps(counted_at, [(10, "cursor expired")])
    assert model.gap_rows() == [15]
    assert model.event_at(14).seq == 91 and model.event_at(15) is None and model.event_at(16).seq == 90
    # a count for a head the model never showed is dropped
    assert not model.set_gaps(model.head + 1000, [(3, "cursor expired")])
    assert model.gap_rows() == [15]
    writer.close()
    reader.close()


class PagesNoted(TenantReader):
    """A reader counting its page reads."""

    pages = 0

    def page(self, flt: EventFilter, max_seq: int, offset: int, limit: int) -> list:
        self.pages += 1
        return super().page(flt, max_seq, offset, limit)


def test_a_role_no_row_answers_reads_no_page(qapp, filled_store):
    """A paint asks each cell for alignment, check state, decoration… which no row answers: those return before
    the row is looked up (on the UI thread, a whole paint of calls at a time), and never read a page for it."""
    reader = EventReader(filled_store(2000))
    noted = PagesNoted(reader)
    model = EventTableModel(noted)
    model.reload()
    deep = model.index(1500, Col.TYPE)  # a page not read yet
    read = noted.pages
    for role in (
        Qt.ItemDataRole.TextAlignmentRole,
        Qt.ItemDataRole.CheckStateRole,
        Qt.ItemDataRole.DecorationRole,
    ):
        assert model.data(deep, role) is None
    assert noted.pages == read
    assert model.data(deep) == model.event_at(1500).type  # the row itself is read when asked for
    assert noted.pages == read + 1
    reader.close()


def test_a_long_session_of_batches_the_filter_never_matches_keeps_a_bounded_memory_of_heads(
    qapp, filled_store
):
    """Every batch moves the head, matching or not; the heads remembered for a worker's late count stay few."""
    reader = EventReader(filled_store(50))
    model = EventTableModel(TenantReader(reader))
    model.reload()
    for head in range(51, 5051):  # an hour of the demo's batches, none of them matching
        assert model.apply_advance(head, 0) == 0
    assert model.head == 5050 and model.rowCount() == 50
    assert len(model._added_at) <= KEPT_HEADS
    assert 5050 in model._added_at
    reader.close()
