"""Choosing a row: the detail pane says "Reading the event…" only once its read has taken a moment (a live row's
JSON answers in a frame or two, and the line flashed for it), and meanwhile it neither shows nor acts on the
event chosen before: no JSON, no link, copying does nothing.

The store is real; its reader for the window's read threads holds event reads at will (a slow archive read)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtGui import QGuiApplication

from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, signal_future, until
from tenant_events.store import EventReader
from tenant_events.ui.window.detail_pane import READING
from tenant_events.values.events import StoredEvent
from tenant_events.view.tenant_reader import TenantReader

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]

NOTHING = "nothing copied"


class HeldReader(TenantReader):
    """A real reader whose reads of one event wait while `go` is clear."""

    def __init__(self, reader: EventReader) -> None:
        super().__init__(reader)
        self.go = threading.Event()
        self.go.set()

    def get(self, seq: int) -> StoredEvent | None:
        assert self.go.wait(120), "the test never let the read go on"
        return super().get(seq)


@pytest.fixture
def window(qtbot: Any, qloop: Any, tmp_path: Any, filled_store: Any) -> Iterator[tuple[Any, HeldReader]]:
    from tenant_events.ui.window.main_window import MainWindow

    path = filled_store(60)
    ui, worker = EventReader(path), EventReader(path)
    held = HeldReader(worker)
    w = MainWindow(str(tmp_path / "window.ini"))
    try:
        w.show()
        qtbot.waitExposed(w)

        async def add() -> None:
            updated = signal_future(w.aggregates_updated)
            w.add_tenant("acme", TenantReader(ui), held)
            await updated

        run_async(qloop, add())
        yield w, held
    finally:
        held.go.set()
        run_async(qloop, w.shutdown())
        w.close()
        w.deleteLater()
        ui.close()
        worker.close()


def _shows_nothing_of(w: Any, before: StoredEvent, chosen: StoredEvent) -> None:
    """The pane right after `chosen` was picked: its title, and nothing of `before` (no JSON, link or copy)."""
    detail = w.detail
    assert detail.shown is not None and detail.shown.seq == chosen.seq
    assert chosen.type in detail.title.toolTip()
    assert detail.browser.toPlainText() == "" and detail.pretty == "" and detail.link.text() == ""
    assert not detail.copy_button.isEnabled() and not detail.copy_jsonl_button.isEnabled()
    clipboard = QGuiApplication.clipboard()
    clipboard.setText(NOTHING)
    w.events.copy_event()  # Edit ▸ Copy event (Ctrl+Shift+C)
    assert clipboard.text() == NOTHING
    w.events.copy_event_jsonl()
    assert before.event_id not in clipboard.text()


def test_a_live_rows_json_comes_without_a_reading_line_between(qloop: Any, window: Any) -> None:
    w, _held = window

    async def scenario() -> None:
        first = w.model.event_at(0)
        w.follow.select_quietly(0)
        await until(lambda: w.detail.pretty, 20, "the first row's JSON")
        second = w.model.event_at(1)
        w.follow.select_quietly(1)
        # not "Reading the event…" at once: the read answers within a frame or two
        _shows_nothing_of(w, first, second)
        await until(lambda: w.detail.pretty, 20, "the second row's JSON")
        assert json.loads(w.detail.pretty)["event"]["id"] == second.event_id
        assert w.detail.copy_button.isEnabled()

    run_async(qloop, scenario())


def test_a_slow_read_says_so_after_a_moment_and_acts_on_nothing_meanwhile(qloop: Any, window: Any) -> None:
    w, held = window

    async def scenario() -> None:
        first = w.model.event_at(0)
        w.follow.select_quietly(0)
        await until(lambda: w.detail.pretty, 20, "the first row's JSON")
        held.go.clear()
        chosen = w.model.event_at(2)
        w.follow.select_quietly(2)
        _shows_nothing_of(w, first, chosen)
        await until(
            lambda: w.detail.browser.toPlainText() == READING, 20, "the pane saying it reads the event"
        )
        _shows_nothing_of_but_reading(w, first)
        held.go.set()
        await until(lambda: w.detail.pretty, 20, "the chosen row's JSON")
        assert json.loads(w.detail.pretty)["event"]["id"] == chosen.event_id
        assert w.detail.browser.toPlainText() != READING and w.detail.copy_button.isEnabled()

    run_async(qloop, scenario())


def _shows_nothing_of_but_reading(w: Any, before: StoredEvent) -> None:
    assert w.detail.pretty == "" and not w.detail.copy_button.isEnabled()
    clipboard = QGuiApplication.clipboard()
    clipboard.setText(NOTHING)
    w.events.copy_event()
    assert clipboard.text() == NOTHING
    w.events.copy_event_jsonl()
    assert before.event_id not in clipboard.text()
