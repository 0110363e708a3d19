"""The Access view asks a tenant's history on a worker thread; a moment typed into it is asked once the typing
rests. An answer for the moment shown before, arriving while the user types the next one, is not shown under the
moment being typed.

The history is real; its reader holds the read of one moment on an event until the test lets it go, after the
user has moved on, so the late answer is made deterministic (no sleeps).
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QDateTime

from helpers.access_story import AFTER, BEFORE, write_story
from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, signal_future, until
from tenant_events.access.records import Snapshot
from tenant_events.store.access_reader import AccessReader
from tenant_events.store.access_records import HeldAt
from tenant_events.ui.window.access.access_controller import ASK_MS

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]
HELD_S = 30.0


class HeldHistory(AccessReader):
    """A real history reader whose reads wait, while `holding`, until `release` is set."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.holding = False
        self.reading, self.release = threading.Event(), threading.Event()

    def held_at(self, moment: int) -> HeldAt:
        if self.holding:
            self.reading.set()
            assert self.release.wait(HELD_S), "the read was never let go"
        return super().held_at(moment)


def _ms(when: Any) -> int:
    return int(when.timestamp() * 1000)


def _moment(edit: Any, when: Any) -> None:
    edit.setDateTime(QDateTime.fromMSecsSinceEpoch(_ms(when)))


def test_an_answer_for_the_moment_before_is_not_shown_while_the_next_is_typed(
    qloop: Any, open_window: Any, tmp_path: Path
) -> None:
    path = tmp_path / "acme.sqlite3"
    write_story(path, crowd=300)
    w = open_window(path, size=(1500, 860))
    page, controller = w.access.page, w.access.controller
    held = HeldHistory(path)

    async def scenario() -> None:
        shown = signal_future(controller.answered)
        w.show_access()
        first = (await shown)[0]
        assert isinstance(first, Snapshot) and first.at_ms is None
        controller._readers.pop("acme").close()  # the tenant's history read by the held reader from here
        controller._readers["acme"] = held
        page.at_now.setChecked(False)
        await until(lambda: controller.answer is not None and controller.answer.at_ms == page.at_ms(), 20)

        held.holding = True
        _moment(page.at, BEFORE)  # asked once the typing rests
        await until(held.reading.is_set, 20, "the moment before being read")
        held.holding = False
        reads = [t for t in w._tasks if t.get_coro().__qualname__ == "AccessController._read"]
        asked = controller.answer
        controller._ask.setInterval(
            int(HELD_S * 1000)
        )  # the user still typing the next moment, digit by digit
        _moment(page.at, AFTER)
        held.release.set()
        await asyncio.gather(*reads, return_exceptions=True)
        assert controller.answer is asked, "the answer for the moment before, shown under the one being typed"
        assert page.counts.text() == "Reading…"

        controller._ask.setInterval(ASK_MS)  # the typing rests: the moment typed is asked
        shown = signal_future(controller.answered)
        controller._ask.start()
        after = (await shown)[0]
        assert isinstance(after, Snapshot) and after.at_ms == _ms(AFTER) == page.at_ms()

    try:
        run_async(qloop, scenario())
    finally:
        held.release.set()
