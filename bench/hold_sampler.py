"""What held the UI thread: a thread that samples the main thread's Python stack every millisecond, so the
window bench can say, for each stretch its timer ticked late, which code was running then.

A stretch with no sample at all was spent in C++ that kept the GIL (Qt's own work, not called back into
Python); the samples just after it show the Python call that entered it. Each slow delivery is split into the
thread's CPU, its wait for a core (Linux's schedstat) and the rest, blocked: on a loaded machine most of a
paint's stretch is the wait for a core, which no change to the window's code removes. The sampler and the timed delivery
cost the UI thread a little themselves, and now and then PySide hands the timed `notify` a receiver it cannot
type (it prints an error and that event is lost): --why is for finding what holds the thread; the figures for
the record are the runs without it.
"""

from __future__ import annotations

import collections
import sys
import threading
import time
import traceback

OURS = ("tenant_events", "archive.py")  # frames worth naming: the app's and the bench's
_WAITING = {"wait", "_wait_for_tstate_lock", "get", "select", "poll", "_worker", "run"}  # an idle thread


class HoldSampler:
    def __init__(self, interval_s: float = 0.001) -> None:
        self._main = threading.main_thread().ident
        self._interval = interval_s
        self._stop = threading.Event()
        self.samples: list[tuple[float, str]] = []
        self.others: list[tuple[float, str]] = []  # the other threads' stacks (one may hold the GIL)
        self._thread = threading.Thread(target=self._run, name="hold-sampler", daemon=True)
        self._switch = sys.getswitchinterval()

    def __enter__(self) -> HoldSampler:
        sys.setswitchinterval(self._interval)  # the sampler gets the GIL back within a sample's time
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()
        sys.setswitchinterval(self._switch)

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            frames = sys._current_frames()
            now = time.perf_counter()
            frame = frames.pop(self._main or 0, None)
            frames.pop(threading.get_ident(), None)
            if frame is not None:
                self.samples.append((now, _ours(frame)))
            busy = [_ours(f) for f in frames.values() if f.f_code.co_name not in _WAITING]
            if busy:
                self.others.append((now, " || ".join(busy)))

    def explain(self, start: float, end: float, top: int = 3) -> str:
        """The commonest stacks sampled between `start` and `end` (perf_counter seconds)."""
        inside = [s for t, s in self.samples if start <= t <= end]
        after = next((s for t, s in self.samples if t > end), "?")
        if not inside:
            return f"no sample (C++ holding the GIL); next: {after}"
        counts = collections.Counter(inside).most_common(top)
        others = collections.Counter(s for t, s in self.others if start <= t <= end).most_common(2)
        return (
            f"{len(inside)} samples: "
            + " | ".join(f"{n}x {s}" for s, n in counts)
            + ("\n      other threads: " + " | ".join(f"{n}x {s}" for s, n in others) if others else "")
        )


def _ours(frame: object) -> str:
    """The app's frames of a stack, innermost last, shortened."""
    stack = traceback.extract_stack(frame)  # type: ignore[arg-type]
    picked = [f"{f.name}:{f.lineno}" for f in stack if any(part in f.filename for part in OURS)]
    if stack and not any(part in stack[-1].filename for part in OURS):
        picked.append(f"[{stack[-1].name}]")  # the innermost frame, outside the app
    return " > ".join(picked[-6:]) or "(outside the app)"


def timed_app_class() -> type:
    """A QApplication that times each event it delivers from the loop (not those sent inside another): the
    stretches Qt spends in C++ (layouts, paints, a view's delayed work) are named by their event and widget."""
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtWidgets import QApplication

    class TimedApp(QApplication):
        def __init__(self, argv: list[str]) -> None:
            super().__init__(argv)
            self.delivered: list[tuple[float, float, float, str]] = []
            self._depth = 0

        def notify(self, receiver: QObject, event: QEvent) -> bool:
            self._depth += 1
            started, cpu, queued = time.perf_counter(), time.thread_time(), _run_delay()
            try:
                return super().notify(receiver, event)
            finally:
                self._depth -= 1
                took, cpu = time.perf_counter() - started, time.thread_time() - cpu
                queued = _run_delay() - queued
                if self._depth == 0 and took > 0.02:
                    what = f"{event.type().name} to {type(receiver).__name__}"
                    parent = receiver.parent() if isinstance(receiver, QObject) else None
                    if parent is not None:
                        what += f" in {type(parent).__name__}"
                    self.delivered.append((started, took, cpu, queued, what))

    return TimedApp


def _run_delay() -> float:
    """Seconds this thread has spent runnable but waiting for a core (Linux's schedstat; 0 elsewhere)."""
    try:
        with open("/proc/thread-self/schedstat") as f:
            return int(f.read().split()[1]) / 1e9
    except OSError:
        return 0.0


def events_within(app: object, start: float, end: float) -> str:
    """The slow deliveries of a TimedApp that overlap `start`..`end`."""
    found = [
        f"{what} {took * 1000:.0f} ms ({cpu * 1000:.0f} ms of the thread's CPU, {queued * 1000:.0f} ms waiting"
        f" for a core, {max(0.0, took - cpu - queued) * 1000:.0f} ms blocked: the GIL, a lock or the disk)"
        for at, took, cpu, queued, what in getattr(app, "delivered", [])
        if at < end and at + took > start
    ]
    return "; ".join(found)
