"""Real readers whose reads wait until the test lets them go: a read answering after the window moved on, made
to happen every time instead of on a loaded machine now and then."""

from __future__ import annotations

import threading

from tenant_events.store import EventFilter, EventReader
from tenant_events.values.events import StoredEvent
from tenant_events.view.tenant_reader import TenantReader

HELD_S = 30.0  # a read held longer than this: the test forgot to let it go


class HeldFirstPage(TenantReader):
    """A real reader of first pages whose page reads wait, while `holding`, until `release` is set."""

    def __init__(self, reader: EventReader) -> None:
        super().__init__(reader)
        self.holding = False
        self.reading, self.release = threading.Event(), threading.Event()

    def page(self, flt: EventFilter, max_seq: int, offset: int, limit: int) -> list[StoredEvent]:
        if self.holding:
            self.reading.set()
            assert self.release.wait(HELD_S), "the page was never let go"
        return super().page(flt, max_seq, offset, limit)
