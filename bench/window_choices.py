"""The window's thread while the user works over a year: a row of the archive chosen, and a filter changed with an
archived event in the detail pane.

    rows      rows across the year chosen one after another (an update near each, whose earlier state is looked
              for too), each until its JSON is shown
    filters   an event from the middle of the year in the detail pane, then a filter on its type, one without
              its type and its event id, each until the event is selected again or the pane cleared
    opens     the window opened on one archived event (a notification clicked, "Show in the table"): with no
              filter, then with a filter that hides it (cleared for it), each until its row is selected and its
              JSON shown
    merged    "All tenants" over the year and a second (empty) store, filtered to an archived month, rows of it
              chosen one after another (two updates, whose earlier state is looked for too, and another
              event), each until its JSON is shown

Each is measured as bench/archive.py measures opening the tenant: the longest late tick of a 5 ms timer (the
goal: the window's thread never held more than 100 ms) and the UI thread's CPU in that stretch and in the
stretch that took the most, with how long the answer took to show. Over a year built by bench/archive.py:

    .venv/bin/python bench/window_choices.py --dir /tmp/year-copy     # never the only copy: the window writes
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


class Ticks:
    """A 5 ms timer's ticks on the UI thread, with the thread's CPU time at each."""

    def __init__(self) -> None:
        from PySide6.QtCore import QTimer

        self.at: list[float] = []
        self.cpu: list[float] = []
        self.timer = QTimer()
        self.timer.setInterval(5)
        self.timer.timeout.connect(self._tick)
        self.timer.start()

    def _tick(self) -> None:
        self.at.append(time.perf_counter())
        self.cpu.append(time.thread_time())

    def mark(self) -> int:
        return len(self.at) - 1

    def since(self, first: int) -> str:
        """The longest stretch since tick `first`, the CPU in it, and the most CPU any stretch took."""
        gaps = [b - a for a, b in itertools.pairwise(self.at[first:])]
        spent = [b - a for a, b in itertools.pairwise(self.cpu[first:])]
        k = max(range(len(gaps)), key=gaps.__getitem__)
        return (
            f"longest hold {gaps[k] * 1000:.0f} ms ({spent[k] * 1000:.0f} ms of its CPU),"
            f" most CPU in a hold {max(spent) * 1000:.0f} ms"
        )


async def until(check: Callable[[], Any], limit: float = 120.0) -> Any:
    end = time.monotonic() + limit
    while not (value := check()):
        if time.monotonic() > end:
            raise TimeoutError
        await asyncio.sleep(0.01)
    return value


async def rows(w: Any, ticks: Ticks) -> None:
    n = w.model.rowCount()
    for part in (0.3, 0.5, 0.7, 0.9):
        w.table.scrollTo(w.model.index(int(n * part), 0))  # the page comes into view first (a read by key)
        await asyncio.sleep(1.0)
        near = range(int(n * part), int(n * part) + 200)
        row = next((r for r in near if w.model.event_at(r).type.endswith(".updated")), near[0])
        ev = w.model.event_at(row)
        await asyncio.sleep(0.5)
        first, started = ticks.mark(), time.perf_counter()
        w.follow.select_quietly(row)
        await until(
            lambda ev=ev: w.detail.pretty and w.detail.shown is not None and w.detail.shown.seq == ev.seq
        )
        took = time.perf_counter() - started
        await asyncio.sleep(0.5)
        print(
            f"  row {row:,} {ev.type}: its JSON after {took * 1000:.0f} ms; {ticks.since(first)}", flush=True
        )


async def filters(w: Any, ticks: Ticks) -> None:
    bar = w.filter_bar
    for query in ("type:{type}", "-type:{type}", "{id}"):
        bar.search.setText("")
        bar.search.returnPressed.emit()
        await until(lambda: not w.first_page.busy and not w.model.counting and w.model.has_anchors)
        w.follow.select_quietly(w.model.rowCount() // 2)
        shown = await until(lambda: w.detail.shown)
        await asyncio.sleep(1.0)
        text = query.format(type=shown.type, id=shown.event_id)
        first, started = ticks.mark(), time.perf_counter()
        bar.search.setText(text)
        bar.search.returnPressed.emit()

        def answered(text: str = text, seq: int = shown.seq) -> str:
            if w.first_page.busy or w.model.event_filter.query != text:
                return ""
            if w.detail.shown is None:
                return "cleared"
            ev = w.model.event_at(w.table.currentIndex().row())
            return "selected again" if ev is not None and ev.seq == seq else ""

        outcome = await until(answered)
        took = time.perf_counter() - started
        await asyncio.sleep(1.0)
        print(f"  {text!r}: {outcome} after {took * 1000:.0f} ms; {ticks.since(first)}", flush=True)


async def opens(w: Any, ticks: Ticks) -> None:
    bar, reader = w.filter_bar, w.feed.ui_readers["year"]
    head = w.model.head
    for part, hiding in ((0.3, False), (0.6, False), (0.9, False), (0.5, True), (0.7, True)):
        ev = reader.get(int(head * part))  # (before the measured stretch)
        assert ev is not None
        bar.search.setText(f"-type:{ev.type}" if hiding else "")
        bar.search.returnPressed.emit()
        await until(lambda: not w.first_page.busy and not w.model.counting and w.model.has_anchors)
        w.follow.select_quietly(0)
        await until(lambda: w.detail.pretty)
        await asyncio.sleep(1.0)
        first, started = ticks.mark(), time.perf_counter()
        w.select_event("year", ev.seq)

        def opened(seq: int = ev.seq) -> bool:
            current = w.model.event_at(w.table.currentIndex().row())
            shown = w.detail.shown
            return bool(
                current is not None and current.seq == seq and shown and shown.seq == seq and w.detail.pretty
            )

        await until(opened)
        took = time.perf_counter() - started
        await asyncio.sleep(1.0)
        how = "a filter hiding it" if hiding else "no filter"
        print(f"  seq {ev.seq:,} ({how}): shown after {took * 1000:.0f} ms; {ticks.since(first)}", flush=True)


async def merged(w: Any, ticks: Ticks) -> None:
    from datetime import UTC, datetime

    from tenant_events.store import StoreWriter
    from tenant_events.store.reader import EventReader
    from tenant_events.ui.window.filters.filter_bar import ALL_TENANTS
    from tenant_events.ui.window.table.event_table_model import Col
    from tenant_events.view.tenant_reader import TenantReader

    other = w.feed.ui_readers["year"].path.parent / "other.sqlite3"
    StoreWriter(other).close()  # "All tenants" wants two stores: the year's events and none
    readers = [TenantReader(EventReader(other)) for _ in range(3)]
    w.add_tenant("other", *readers)
    w.filter_bar.tenant_box.setCurrentText(ALL_TENANTS)
    view = w.entities.all_tenants
    for month in (3, 6, 9):
        w.filter_bar.set_custom_range(
            datetime(2026, month, 1, tzinfo=UTC), datetime(2026, month, 28, tzinfo=UTC)
        )
        in_month = f"2026-{month:02}"
        await until(
            lambda m=in_month: view.model.rowCount() >= 200 and view.model.rows[0].event.time.startswith(m)
        )
        await asyncio.sleep(2.0)
        for part, update in ((0.2, True), (0.45, False), (0.7, True)):
            near = range(int(200 * part), int(200 * part) + 40)
            rows = view.model.rows
            r = next((k for k in near if rows[k].event.type.endswith(".updated") == update), near[0])
            ev = view.model.rows[r].event
            first, started = ticks.mark(), time.perf_counter()
            view.view.setCurrentIndex(view.model.index(r, Col.TYPE))
            await until(
                lambda ev=ev: w.detail.pretty and w.detail.shown is not None and w.detail.shown.seq == ev.seq
            )
            took = time.perf_counter() - started
            await asyncio.sleep(0.5)
            print(
                f"  2026-{month:02} row {r} {ev.type}: its JSON after {took * 1000:.0f} ms; {ticks.since(first)}",
                flush=True,
            )
    w.filter_bar.tenant_box.setCurrentText("year")
    w.remove_tenant("other")
    for reader in readers:
        reader.reader.close()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dir", type=Path, required=True, help="a year built by bench/archive.py (a copy)")
    parser.add_argument("--only", choices=("rows", "filters", "opens", "merged"))
    args = parser.parse_args()
    import qasync
    from PySide6.QtWidgets import QApplication

    from tenant_events.store.reader import EventReader
    from tenant_events.ui.window.main_window import MainWindow
    from tenant_events.view.tenant_reader import TenantReader

    db = args.dir / "tenants" / "year.sqlite3"
    app = QApplication(sys.argv[:1])

    async def go() -> None:
        w = MainWindow(str(db.parent / "window.ini"))
        w.resize(1280, 800)
        w.show()
        readers = [TenantReader(EventReader(db)) for _ in range(3)]
        w.add_tenant("year", *readers)
        await until(lambda: w.model.has_anchors and not w.model.counting)
        await asyncio.sleep(2.0)
        ticks = Ticks()
        for name, part in (("rows", rows), ("filters", filters), ("opens", opens), ("merged", merged)):
            if args.only in (None, name):
                print(f"{name}:", flush=True)
                await part(w, ticks)
        ticks.timer.stop()
        await w.shutdown()
        w.close()
        for r in readers:
            r.reader.close()

    with asyncio.Runner(loop_factory=qasync.QEventLoop) as runner:
        runner.run(go())
    del app
    return 0


if __name__ == "__main__":
    sys.exit(main())
