"""Selecting an event in the window: J/K steps, re-finding the shown event after a filter change, and opening
the window on one event (a clicked notification), clearing the filters that hide it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tenant_events.ui.window.main_window import MainWindow


def reselect_detail(w: MainWindow) -> None:
    """After a filter change: select the event the detail pane shows again, or clear the pane if it is gone."""
    shown = w.detail.shown
    if shown is None:
        return
    row = w.model.row_of_seq(shown.seq)
    if row is None:
        w.detail.show_event(None)
    else:
        w.follow.select_quietly(row)


def select_event(w: MainWindow, tenant: str, seq: int) -> bool:
    w.bring_to_front()
    if tenant and tenant in w._data:
        w.show_tenant(tenant)
    if seq <= 0 or w.tenant is None:
        return False
    ev = w._data[w.tenant].get(seq)
    if ev is None:
        return False
    w.model.advance_head()
    row = w.model.row_of_seq(ev.seq)
    if row is None:
        bar = w.filter_bar
        bar.blockSignals(True)
        bar.clear_types()
        bar.search.clear()
        bar.range_box.setCurrentIndex(0)
        bar.test_box.setChecked(True)
        bar.blockSignals(False)
        w.zoom.stack.clear()
        w.model.set_filter(bar.current())  # counted now: the row number is needed at once
        w.schedule_aggregates(now=True)
        row = w.model.row_of_seq(ev.seq)
    if row is None:
        return False
    w.follow.select_quietly(row)
    return True


def step(w: MainWindow, delta: int) -> None:
    rows = w.model.rowCount()
    if rows == 0:
        return
    current = w.table.currentIndex().row()
    w.follow.select_quietly(min(max(0 if current < 0 else current + delta, 0), rows - 1))
