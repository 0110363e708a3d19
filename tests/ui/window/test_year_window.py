"""The window over a year in two tiers: the table scrolls from the live rows into the archived ones without a
seam, the histogram spans the whole year, and a filter's rows and counts come from both tiers
(docs/archive.md "One view")."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from contextlib import contextmanager

import pytest

from helpers.fixtures_ui import run_async, save_screenshot, signal_future
from helpers.fixtures_window import settle
from helpers.history import history
from tenant_events.errors import StorageError
from tenant_events.store import Batch, EventReader, StoreWriter
from tenant_events.store.archive_keeper import keep
from tenant_events.values.events import EventFilter, StoredEvent
from tenant_events.values.retention import Retention
from tenant_events.view.tenant_reader import TenantReader

DAY = 86400.0


def _year(path, n: int = 6000) -> list:
    rows = history(n, time.time() - 365 * DAY, 365 * DAY / n, seed=11)
    writer = StoreWriter(path)
    try:
        for at in range(0, n, 1000):
            writer.commit_sync(Batch(events=rows[at : at + 1000]))
        writer.index_all_sync()
        assert keep(writer, Retention(keep_live_days=30, settle_seconds=0)).moved > n * 0.85
    finally:
        writer.close()
    return rows


def bar_columns(w) -> list[int]:
    image = w.histogram.grab().toImage()
    empty = image.pixelColor(1, 1)
    y = image.height() - 30
    return [x for x in range(image.width()) if image.pixelColor(x, y) != empty]


def test_a_year_in_two_tiers_fills_the_table_and_the_histogram(open_window, qloop, qtbot, tmp_path):
    path = tmp_path / "year.sqlite3"
    rows = _year(path)
    w = open_window(path)
    qtbot.waitUntil(lambda: not w.model.counting, timeout=60_000)
    assert w.model.rowCount() == len(rows)
    with EventReader(path) as reader:
        archived = reader.archived_upto()
    # the newest row is live; the last row of the table is the year's first event, from the archive
    assert w.model.event_at(0).seq == len(rows)
    oldest = w.model.event_at(len(rows) - 1)
    assert oldest is not None and oldest.seq == 1 and oldest.seq <= archived
    qtbot.waitUntil(lambda: len(bar_columns(w)) > w.histogram.width() * 0.5, timeout=30_000)
    save_screenshot(w, "year-table-and-histogram")
    w.table.scrollTo(w.model.index(len(rows) - 40, 0))
    run_async(qloop, settle(w))
    save_screenshot(w, "year-oldest-rows")
    w.apply_filter_now(EventFilter(query="type:user.created"))
    qtbot.waitUntil(lambda: not w.model.counting and w.model.rowCount() > 0, timeout=60_000)
    assert w.model.rowCount() == sum(r.type == "user.created" for r in rows)
    run_async(qloop, settle(w))
    save_screenshot(w, "year-filtered")


class ReadsNoted(TenantReader):
    """A reader noting the thread of every head, page, count and event read (a year's newest page comes through
    DuckDB, a year's count scans the whole archive), and that thread's niceness (Linux: each thread's own)."""

    def __init__(self, reader: EventReader) -> None:
        super().__init__(reader)
        self.threads: list[threading.Thread] = []
        self.counts: list[threading.Thread] = []
        self.gets: list[threading.Thread] = []
        self.opening_again = False  # reads of an event fail as while the database is opened again
        self.go = threading.Event()  # reads of an event wait while it is clear (a slow archive read, at will)
        self.go.set()
        self.pages_go = threading.Event()  # a query's pages wait while it is clear
        self.pages_go.set()
        self.niceness: list[int] = []

    def _note(self) -> None:
        self.threads.append(threading.current_thread())
        self.niceness.append(os.getpriority(os.PRIO_PROCESS, 0))

    def head_seq(self) -> int:
        self._note()
        return super().head_seq()

    def page(self, flt: EventFilter, max_seq: int, offset: int, limit: int) -> list:
        self._note()
        if flt.query:
            assert self.pages_go.wait(120), "the test never let the query's page be read"
        return super().page(flt, max_seq, offset, limit)

    def count(self, flt: EventFilter, max_seq: int, min_seq: int = 0) -> int:
        self._note()
        self.counts.append(threading.current_thread())
        return super().count(flt, max_seq, min_seq)

    def get(self, seq: int) -> StoredEvent | None:
        self._note()
        self.gets.append(threading.current_thread())
        assert self.go.wait(120), "the test never let the read go on"
        if self.opening_again:
            raise StorageError("the database is being opened again")
        return super().get(seq)


@contextmanager
def _year_opened(qloop, qtbot, tmp_path, while_adding=None):
    """The window opening a year of 3,000 events through two noted readers (the UI's and the worker's), until
    its aggregates are in: (window, ui reader, worker reader, rows). `while_adding(ui, worker)` runs right after
    the tenant is added, before anything is awaited."""
    from tenant_events.ui.window.main_window import MainWindow

    path = tmp_path / "year.sqlite3"
    rows = _year(path, 3000)
    ui, worker = ReadsNoted(EventReader(path)), ReadsNoted(EventReader(path))
    w = MainWindow(str(tmp_path / "window.ini"))
    try:
        w.show()
        qtbot.waitExposed(w)

        async def add() -> None:
            updated = signal_future(w.aggregates_updated)
            w.add_tenant("year", ui, worker)
            if while_adding is not None:
                while_adding(ui, worker)
            await updated

        run_async(qloop, add())
        yield w, ui, worker, rows
    finally:
        run_async(qloop, w.shutdown())
        w.close()
        w.deleteLater()
        ui.reader.close()
        worker.reader.close()


def test_opening_a_year_counts_it_off_the_ui_thread(qloop, qtbot, tmp_path):
    with _year_opened(qloop, qtbot, tmp_path) as (w, ui, worker, rows):
        assert w.model.rowCount() == len(rows)
        counted = ui.counts + worker.counts
        assert counted, "the window never counted the tenant"
        assert threading.main_thread() not in counted


def test_opening_a_year_reads_its_first_page_off_the_ui_thread(qloop, qtbot, tmp_path):
    """Adding a tenant returns at once: its head and its newest rows are read on a worker, then shown."""

    def nothing_read_yet(ui: ReadsNoted, worker: ReadsNoted) -> None:
        assert ui.threads + worker.threads == [], "adding the tenant read its store on the UI thread"

    with _year_opened(qloop, qtbot, tmp_path, nothing_read_yet) as (w, _ui, worker, rows):
        assert w.model.rowCount() == len(rows)
        assert w.model.event_at(0).seq == len(rows)
        assert worker.threads and threading.main_thread() not in worker.threads


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="niceness is per thread on Linux only")
def test_the_windows_reads_of_a_year_run_below_its_thread(qloop, qtbot, tmp_path):
    """The first page, the count and the aggregates read on threads of a lower priority than the UI thread's: a
    year's reads on every core made its paints wait for one."""
    from tenant_events.thread_priority import BACKGROUND_NICENESS

    with _year_opened(qloop, qtbot, tmp_path) as (_w, _ui, worker, _rows):
        ours = os.getpriority(os.PRIO_PROCESS, 0)
        assert worker.threads and threading.main_thread() not in worker.threads
        assert set(worker.niceness) == {min(ours + BACKGROUND_NICENESS, 19)}


def test_the_shown_event_is_found_again_off_the_ui_thread_after_a_filter_change(qloop, qtbot, tmp_path):
    """After a filter change the detail pane's event is selected again where it now sits, or the pane cleared
    when the filter hides it: where it sits is a count of its newer matches (over a year's archive 0.1-4 s), made
    on a read thread while the pane keeps showing the event."""
    from helpers.fixtures_ui import until

    with _year_opened(qloop, qtbot, tmp_path) as (w, ui, worker, rows):

        def selected_seq() -> int | None:
            ev = w.model.event_at(w.table.currentIndex().row())
            return ev.seq if ev is not None else None

        async def scenario() -> None:
            w.follow.select_quietly(len(rows) // 2)  # an event of the archive, far below the first page
            await until(lambda: w.detail.shown is not None, 10, "the event in the detail pane")
            shown = w.detail.shown
            assert shown is not None and shown.seq <= ui.reader.archived_upto()
            ui.counts.clear()
            worker.counts.clear()
            w.filter_bar.search.setText(f"type:{shown.type}")
            w.filter_bar.search.returnPressed.emit()
            await until(lambda: w.model.event_filter.query, 30, "the query's first page shown")
            await until(lambda: selected_seq() == shown.seq, 30, "the event selected again")
            assert w.detail.shown is not None and w.detail.shown.seq == shown.seq
            assert worker.counts and threading.main_thread() not in ui.counts + worker.counts
            w.filter_bar.search.setText(f"-type:{shown.type}")
            w.filter_bar.search.returnPressed.emit()
            await until(lambda: w.detail.shown is None, 30, "the pane cleared: the filter hides the event")
            assert threading.main_thread() not in ui.counts + worker.counts

        run_async(qloop, scenario())


def test_an_archived_rows_json_is_read_off_the_ui_thread(qloop, qtbot, tmp_path):
    """Selecting a row of the archive shows its type and summary at once (and says its JSON is being read once
    that takes a moment: test_detail_reading.py); the event is read on a read thread (from its monthly file:
    0.1-0.5 s on a year, an update's earlier state up to a second more), then shown."""
    import json

    from helpers.fixtures_ui import until
    from tenant_events.ui.window.event_actions import UNREAD

    with _year_opened(qloop, qtbot, tmp_path) as (w, ui, worker, rows):

        async def scenario() -> None:
            ui.gets.clear()
            worker.gets.clear()
            w.follow.select_quietly(len(rows) // 2)
            shown = w.detail.shown
            assert shown is not None and shown.seq <= ui.reader.archived_upto()
            assert shown.type in w.detail.title.toolTip() and not w.detail.copy_button.isEnabled()
            await until(lambda: w.detail.pretty, 20, "the event's JSON")
            assert json.loads(w.detail.pretty)["event"]["id"] == shown.event_id
            assert w.detail.copy_button.isEnabled()
            assert worker.gets and threading.main_thread() not in ui.gets + worker.gets
            # the database being opened again as a row is chosen: the pane says so, and the row reads once chosen again
            worker.opening_again = True
            w.follow.select_quietly(len(rows) // 2 + 1)
            await until(
                lambda: w.detail.browser.toPlainText() == UNREAD, 20, "the pane saying it could not read"
            )
            assert not w.detail.copy_button.isEnabled() and w.detail.shown is not None
            worker.opening_again = False
            w.follow.select_quietly(len(rows) // 2)
            await until(lambda: w.detail.pretty, 20, "the event's JSON, chosen again")

        run_async(qloop, scenario())


def _current_seq(w) -> int | None:
    ev = w.model.event_at(w.table.currentIndex().row())
    return ev.seq if ev is not None else None


async def _query(w, text: str) -> None:
    from helpers.fixtures_ui import until

    w.filter_bar.search.setText(text)
    w.filter_bar.search.returnPressed.emit()
    await until(
        lambda: w.model.event_filter.query == text and not w.first_page.busy and not w.model.counting,
        30,
        f"the table filtered by {text!r}",
    )


def test_opening_the_window_on_an_archived_event_reads_it_off_the_ui_thread(qloop, qtbot, tmp_path):
    """A notification clicked (the inbox's or an alert's "Show in the table", a timeline's entry): the event, the
    filter that shows it (here the filter bar's hides it: cleared) and its place are read on a read thread
    (over a year's archive 0.1-0.5 s, the counts more), then its row is selected with its JSON in one step."""
    import json

    with _year_opened(qloop, qtbot, tmp_path) as (w, ui, worker, rows):

        async def scenario() -> None:
            seq = len(rows) // 2
            target = ui.reader.get(seq)
            assert target is not None and seq <= ui.reader.archived_upto()
            await _query(w, f"-type:{target.type}")
            for noted in (ui, worker):
                noted.threads.clear()
            opening = w.select_event("year", seq)
            assert threading.main_thread() not in ui.threads + worker.threads, "read on the UI thread"
            assert opening is not None and _current_seq(w) != seq
            await opening
            assert _current_seq(w) == seq
            assert w.model.event_filter.query == "" and w.filter_bar.search.text() == ""
            assert w.detail.pretty and json.loads(w.detail.pretty)["event"]["id"] == target.event_id
            assert worker.threads and threading.main_thread() not in ui.threads + worker.threads

        run_async(qloop, scenario())


def test_an_event_opened_late_is_not_shown_over_what_the_user_chose_meanwhile(qloop, qtbot, tmp_path):
    """The user chose another row, another filter or another event to open, or closed the window, while the
    event was read: its answer is dropped — the user's row stays selected where it is, their filter stays."""
    from helpers.fixtures_ui import until

    with _year_opened(qloop, qtbot, tmp_path) as (w, _ui, worker, rows):

        async def opened_while(seq: int, move) -> None:
            worker.go.clear()
            opening = w.select_event("year", seq)
            assert opening is not None
            moved = move()
            if moved is not None:
                await moved  # (the user's filter shown: its first page read)
            scrolled = w.table.verticalScrollBar().value()
            worker.go.set()
            await opening
            assert w.table.verticalScrollBar().value() == scrolled, "the table moved under the user"

        async def scenario() -> None:
            target, other = len(rows) // 2, len(rows) // 3
            w.follow.select_quietly(5)
            await until(lambda: w.detail.pretty, 20, "the row's JSON")
            # another row chosen: it stays chosen, its JSON shown
            await opened_while(target, lambda: w.follow.select_quietly(10))
            chosen = w.model.event_at(10)
            assert _current_seq(w) == chosen.seq
            await until(lambda: w.detail.pretty, 20, "the chosen row's JSON")
            assert w.detail.shown is not None and w.detail.shown.seq == chosen.seq
            # another filter: it stays, nothing selected in it by the late answer
            await opened_while(target, lambda: _query(w, "type:user.created"))
            assert w.filter_bar.search.text() == "type:user.created"
            assert w.model.event_filter.query == "type:user.created" and _current_seq(w) != target
            # another event opened: the newer one is shown
            await _query(w, "")
            worker.go.clear()
            older = w.select_event("year", target)
            newer = w.select_event("year", other)
            assert older is not None and newer is not None
            worker.go.set()
            await older
            await newer
            assert _current_seq(w) == other
            # the window closed (to the tray): nothing moves in it
            await opened_while(target, w.hide)
            assert _current_seq(w) == other

        run_async(qloop, scenario())


def test_an_event_opened_while_a_querys_page_comes_is_shown(qloop, qtbot, tmp_path):
    """A query typed, then a notification clicked before the query's first page came: that page selects the
    event shown before again (where it now sits) — not a choice of the user's, so the event asked for is
    opened once read."""
    from helpers.fixtures_ui import until

    with _year_opened(qloop, qtbot, tmp_path) as (w, ui, worker, rows):

        async def scenario() -> None:
            before = w.model.event_at(3)
            target = next(
                seq
                for seq in range(len(rows) // 2, 0, -1)
                if (ev := ui.reader.get(seq)) is not None and ev.type == before.type
            )
            w.follow.select_quietly(3)
            await until(lambda: w.detail.pretty, 20, "the row's JSON")
            worker.pages_go.clear()
            worker.go.clear()
            query = f"type:{before.type}"
            w.filter_bar.search.setText(query)
            w.filter_bar.search.returnPressed.emit()
            opening = w.select_event("year", target)
            assert opening is not None
            worker.pages_go.set()
            await until(
                lambda: w.model.event_filter.query == query and _current_seq(w) == before.seq,
                30,
                "the event shown before selected again in the query's rows",
            )
            worker.go.set()
            await opening
            assert _current_seq(w) == target and w.model.event_filter.query == query

        run_async(qloop, scenario())


def test_the_row_menu_reads_an_archived_rows_event_off_the_ui_thread(qloop, qtbot, tmp_path):
    """A right-click on an archived row: its event as stored (the menu's choices from its JSON, "Copy event") is
    read on a read thread (over a year's archive 0.1-0.5 s), then the menu opens; an answer after the user moved
    on (another row chosen) opens none."""
    from PySide6.QtGui import QContextMenuEvent
    from PySide6.QtWidgets import QApplication

    from helpers.fixtures_ui import until
    from tenant_events.ui.window.table.event_table_model import Col

    def right_click(row: int) -> None:
        pos = w.table.visualRect(w.model.index(row, Col.TYPE)).center()
        assert w.table.viewport().rect().contains(pos)
        at = w.table.viewport().mapToGlobal(pos)
        QApplication.sendEvent(w.table.viewport(), QContextMenuEvent(QContextMenuEvent.Reason.Mouse, pos, at))

    with _year_opened(qloop, qtbot, tmp_path) as (w, ui, worker, rows):

        async def scenario() -> None:
            row = len(rows) // 2
            w.follow.select_quietly(row)
            await until(lambda: w.detail.pretty, 20, "the row's JSON")
            assert w.model.event_at(row + 1).seq <= ui.reader.archived_upto()
            ui.gets.clear()
            worker.gets.clear()
            worker.go.clear()
            right_click(row + 1)
            await until(lambda: worker.gets, 20, "the event read")
            assert w.row_menu.menu is None, "the menu opened before its event was read"
            worker.go.set()
            await until(lambda: w.row_menu.menu is not None and w.row_menu.menu.isVisible(), 20, "the menu")
            menu = w.row_menu.menu
            assert next(
                a for a in menu.actions() if a.text() == "Copy event"
            ).isEnabled()  # the JSON was read
            assert threading.main_thread() not in ui.gets + worker.gets
            menu.close()
            await until(lambda: w.row_menu.menu is None, 20, "the menu gone")
            # the user moves on while the event is read: no menu opens over their new row
            worker.go.clear()
            worker.gets.clear()
            right_click(row - 1)
            await until(lambda: worker.gets, 20, "the event read")
            w.follow.select_quietly(row + 2)
            worker.go.set()
            await until(
                lambda: w.detail.pretty and w.detail.shown.seq == w.model.event_at(row + 2).seq, 20, "JSON"
            )
            await asyncio.sleep(0.2)
            assert w.row_menu.menu is None and threading.main_thread() not in ui.gets + worker.gets

        run_async(qloop, scenario())
