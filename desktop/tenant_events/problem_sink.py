"""The app's one error sink: uncaught exceptions and user-fixable errors become `Problem`s (Qt-free).

sys.excepthook (which qasync's asyncSlot uses), threading.excepthook and the asyncio loop's exception handler
all feed `ProblemSink.report`; the UI subscribes and renders (CONTRIBUTING.md "Style"). Repeats of the same problem
within `throttle_s` are dropped, not shown again, so a failing timer cannot flood the user.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from tenant_events.errors import UserFixableError
from tenant_events.logs import redact

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Problem:
    """Something the user should see: `details` holds a traceback for bugs, empty for fixable errors."""

    level: str  # "error" | "warning" | "info"
    title: str
    text: str
    details: str = ""
    created: float = field(default_factory=time.time)


Subscriber = Callable[[Problem], None]


class ProblemSink:
    """Collects problems, throttles repeats and hands them to subscribers (the UI)."""

    def __init__(self, throttle_s: float = 10.0) -> None:
        self._subscribers: list[Subscriber] = []
        self._last_seen: dict[tuple[str, str], float] = {}
        self.throttle_s = throttle_s
        self.history: list[Problem] = []

    def subscribe(self, fn: Subscriber) -> None:
        self._subscribers.append(fn)

    def report(self, problem: Problem) -> None:
        key = (problem.title, problem.text)
        now = time.monotonic()
        last = self._last_seen.get(key)
        self._last_seen[key] = now
        if last is not None and now - last < self.throttle_s:
            return
        self.history.append(problem)
        del self.history[:-200]
        for fn in list(self._subscribers):
            try:
                fn(problem)
            except Exception:  # a broken subscriber must not silence the sink
                log.exception("problem subscriber failed")

    def report_exception(self, exc: BaseException, context: str = "") -> None:
        if isinstance(exc, UserFixableError):
            log.warning("%s%s", f"{context}: " if context else "", exc)
            self.report(Problem("warning", redact(exc.message), redact(exc.hint)))
            return
        # The crash report is shown with a copy button and pasted into bug reports: mask tokens as the log does.
        tb = redact("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
        log.error("unexpected error%s\n%s", f" in {context}" if context else "", tb)
        self.report(Problem("error", "Something went wrong", redact(f"{type(exc).__name__}: {exc}"), tb))


def install_hooks(sink: ProblemSink, loop: asyncio.AbstractEventLoop | None = None) -> Callable[[], None]:
    """Route sys/threading excepthooks and the loop handler into `sink`; returns a function undoing it."""
    old_sys, old_thread = sys.excepthook, threading.excepthook

    def sys_hook(t: type[BaseException], v: BaseException, tb: TracebackType | None) -> None:
        if issubclass(t, KeyboardInterrupt):
            old_sys(t, v, tb)
            return
        sink.report_exception(v.with_traceback(tb))

    def thread_hook(args: threading.ExceptHookArgs) -> None:
        if args.exc_value is not None:
            name = args.thread.name if args.thread else "?"
            sink.report_exception(args.exc_value, f"thread {name}")

    def loop_hook(lp: asyncio.AbstractEventLoop, ctx: dict[str, Any]) -> None:
        exc = ctx.get("exception")
        if isinstance(exc, BaseException):
            sink.report_exception(exc, str(ctx.get("message", "")))
        else:
            log.error("asyncio: %s", ctx.get("message"))

    sys.excepthook = sys_hook
    threading.excepthook = thread_hook
    if loop is not None:
        loop.set_exception_handler(loop_hook)

    def undo() -> None:
        sys.excepthook, threading.excepthook = old_sys, old_thread
        if loop is not None:
            loop.set_exception_handler(None)

    return undo
