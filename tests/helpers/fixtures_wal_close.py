"""When readers keep a store's write-ahead log from being emptied at close, say which: every thread's stack at
that moment goes into the log as a WARNING, so the failing test shows it beside the store's own warning. The app's readers are threads of the test's process, and a query still running in one
of them is what holds the log; by the time the test fails it has ended."""

from __future__ import annotations

import logging
import sys
import threading
import traceback
from typing import Any, Literal

import pytest

from tenant_events.store.checkpoint import WalKeeper

log = logging.getLogger("tests.wal_close")


def _stacks() -> str:
    names = {t.ident: t.name for t in threading.enumerate()}
    return "\n".join(
        f"--- thread {names.get(ident, ident)}\n" + "".join(traceback.format_stack(frame))
        for ident, frame in sys._current_frames().items()
    )


def pytest_configure(config: pytest.Config) -> None:
    real = WalKeeper.checkpoint
    if getattr(real, "with_stacks", False):
        return

    def checkpoint(self: WalKeeper, mode: Literal["PASSIVE", "RESTART", "TRUNCATE"], *, wait: bool) -> bool:
        done = real(self, mode, wait=wait)
        if not done and mode == "TRUNCATE" and wait and sys._getframe(1).f_code.co_name == "close":
            log.warning(
                "%s: readers held the write-ahead log; the threads now:\n%s", self.path.name, _stacks()
            )
        return done

    marked: Any = checkpoint
    marked.with_stacks = True
    WalKeeper.checkpoint = checkpoint  # type: ignore[method-assign]
