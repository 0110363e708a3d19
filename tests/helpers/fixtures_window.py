"""The main window over real stores, for the window tests: `open_window(path)` and `settle(w)`.

The window is the real MainWindow with the app's store adapters (a page reader for the UI thread, one for the
workers); its aggregates run on the test's qasync loop (`settle` waits for the next pass).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers.fixtures_ui import run_async, signal_future


async def settle(w: Any) -> None:
    """Run the window's aggregates now (counts, histogram, column rules) and wait for them."""
    updated = signal_future(w.aggregates_updated)
    w.schedule_aggregates(now=True)
    await updated


@pytest.fixture
def open_window(qtbot: Any, qloop: Any, tmp_path: Path) -> Iterator[Callable[..., Any]]:
    from PySide6.QtCore import QEvent
    from PySide6.QtWidgets import QApplication

    from tenant_events.store import EventReader
    from tenant_events.ui.window.main_window import MainWindow
    from tenant_events.view.tenant_reader import TenantReader

    opened: list[tuple[Any, Any, Any]] = []

    def make(
        path: Path, name: str = "acme", size: tuple[int, int] = (1600, 900), state: str = "window.ini"
    ) -> Any:
        reader, stats = EventReader(path), EventReader(path)
        w = MainWindow(str(tmp_path / state))  # closed below, after its tasks stop (not by qtbot's teardown)
        w.resize(*size)
        w.show()
        qtbot.waitExposed(w)
        w.activateWindow()  # window shortcuts need the active window
        qtbot.waitUntil(w.isActiveWindow)

        async def fill() -> None:
            updated = signal_future(w.aggregates_updated)
            w.add_tenant(name, TenantReader(reader), TenantReader(stats))
            await updated

        run_async(qloop, fill())
        opened.append((w, reader, stats))
        return w

    yield make
    for w, reader, stats in opened:
        run_async(qloop, w.shutdown())
        w.close()
        w.deleteLater()
        # delete it now, on this thread: left to Python's collector, a later test's worker thread could be the one
        # that frees it ("Timers cannot be stopped from another thread")
        QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        reader.close()
        stats.close()
    # their wrappers and cycles go right after, on this thread (_free_qt_objects_on_this_thread)


@pytest.fixture(autouse=True)
def _free_qt_objects_on_this_thread(request: pytest.FixtureRequest) -> Iterator[None]:
    """Before and after a Qt test: delete what was left to deleteLater, then collect Python cycles, here.

    A window's Python wrapper sits in reference cycles (its parts keep a reference to it). Left to the cyclic
    collector, it may be freed in whatever thread allocates next — a later test's worker thread — and Qt then
    warns "Timers cannot be stopped from another thread", failing that unrelated test. Before the test too: a
    thread that outlived an earlier test (a daemon the app started) may have let go of the last reference to that
    test's qasync loop since, and the loop's timer object would then be freed on this test's worker threads.
    """
    qt = bool({"qapp", "qtbot", "qloop"} & set(request.fixturenames))
    if qt:
        gc.collect()
    yield
    if not qt:
        return
    from PySide6.QtCore import QEvent
    from PySide6.QtWidgets import QApplication

    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()
