"""When readers keep a store's write-ahead log from being emptied at close, say which: every thread's stack at
that moment, the live cursors on the file and the store's suspended generators go into the log as a WARNING, so
the failing test shows them beside the store's own warning. A query still running in a thread, or a statement
left unfinished by a cursor still alive, is what holds the log; by the time the test fails it has ended."""

from __future__ import annotations

import gc
import logging
import os
import sqlite3
import sys
import threading
import traceback
import types
from pathlib import Path
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


def _open_reads(path: Path) -> str:
    """What may hold a read open with no thread in a query: live cursors on the file's connections (and what
    refers to them), and suspended generators of the store's modules."""
    key = os.path.realpath(path)
    lines: list[str] = []
    everything = gc.get_objects()
    for obj in everything:
        if isinstance(obj, sqlite3.Cursor) and getattr(obj.connection, "tracked_key", "") == key:
            held_by = ", ".join(type(r).__name__ for r in gc.get_referrers(obj) if r is not everything)
            lines.append(f"--- a live cursor, held by: {held_by}")
        elif isinstance(obj, types.GeneratorType) and obj.gi_frame is not None:
            code = obj.gi_code
            if "tenant_events" in code.co_filename:
                lines.append(
                    f"--- a suspended generator {code.co_name} at {code.co_filename}:{obj.gi_frame.f_lineno}"
                )
    return "\n".join(lines) or "--- no live cursor nor suspended generator of the store"


def pytest_configure(config: pytest.Config) -> None:
    real_checkpoint, real_close = WalKeeper.checkpoint, WalKeeper.close
    if getattr(real_checkpoint, "with_stacks", False):
        return
    held: dict[int, str] = {}

    def checkpoint(self: WalKeeper, mode: Literal["PASSIVE", "RESTART", "TRUNCATE"], *, wait: bool) -> bool:
        done = real_checkpoint(self, mode, wait=wait)
        if not done and mode == "TRUNCATE" and wait and sys._getframe(1).f_code.co_name == "close":
            held[id(self)] = _stacks() + "\n" + _open_reads(self.path)
        elif done and mode == "TRUNCATE":
            held.pop(id(self), None)  # emptied after all (on the store's second try)
        return done

    def close(self: WalKeeper) -> None:
        try:
            real_close(self)
        finally:
            stacks = held.pop(id(self), None)
        if stacks is not None:  # (the store warned of it too)
            log.warning("%s: readers held the write-ahead log; the threads now:\n%s", self.path.name, stacks)

    marked: Any = checkpoint
    marked.with_stacks = True
    WalKeeper.checkpoint = checkpoint  # type: ignore[method-assign]
    WalKeeper.close = close  # type: ignore[method-assign]
