"""Unseen rows: new rows at the top, partly scrolled past, shifted by rows inserted or removed elsewhere."""

from __future__ import annotations

from tenant_events.view.unseen_rows import UnseenRows


def test_new_rows_merge_at_the_top_and_seen_rows_leave():
    u = UnseenRows()
    u.arrived(3)
    u.arrived(2)
    assert u.spans == [(0, 5)] and u.count == 5
    assert u.seen(1, 2) == 2
    assert u.spans == [(0, 1), (3, 5)] and u.first() == 0
    u.arrived(1)  # the new row joins the unseen row 0 (now row 1)
    assert u.spans == [(0, 2), (4, 6)]
    assert u.seen(0, 100) == 4 and u.count == 0 and u.first() is None


def test_rows_inserted_or_removed_elsewhere_shift_the_unseen_ones():
    u = UnseenRows()
    u.arrived(4)
    u.inserted_at(2, 1)  # a gap row inside the new block is not a new event
    assert u.spans == [(0, 2), (3, 5)] and u.count == 4
    u.inserted_at(10, 3)  # below: nothing moves
    assert u.spans == [(0, 2), (3, 5)]
    u.removed_at(2, 1)  # the gap row goes again: the block is whole
    assert u.spans == [(0, 4)]
    u.removed_at(1, 2)
    assert u.spans == [(0, 2)]
    assert u.seen(5, 4) == 0  # an empty range sees nothing
