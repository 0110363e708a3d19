"""Every connection closes the HTTP library's async generators on the loop, also where the loop has no hooks for
them — the window's Qt loop.

A generator left half-read (a rotation ends the stream in the middle of `aiter_bytes()`) is finalised wherever it
is collected. Plain asyncio installs async-generator hooks that close it on the loop, so nothing ever showed in
these tests; qasync installs none, so under the window Python closed it on the spot or on whichever thread the
garbage collector ran, httpcore's clean-up found "no running event loop" or could not await, and Python printed
"Exception ignored in …" at every rotation and at quit. This test runs the engine the way the window does — no
hooks, the collector running on another thread — and fails on any such "unraisable" exception.
"""

from __future__ import annotations

import asyncio
import gc
import subprocess
import sys
import threading
from pathlib import Path

from helpers.fixtures_engine import _STARTED, OLD, CliProcess, follow, unraisable_printed


class LikeTheQtLoop:
    """Removes the async-generator hooks inside the engine's loop (qasync's loop sets none) and keeps every
    exception Python could only print as "Exception ignored in …" while a thread runs the garbage collector."""

    def __init__(self) -> None:
        self.ignored: list[str] = []
        self.installed = False
        self._stop = threading.Event()
        self._collector = threading.Thread(target=self._collect, daemon=True)

    def __enter__(self) -> LikeTheQtLoop:
        self._previous = sys.unraisablehook
        sys.unraisablehook = self._note
        self._collector.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._collector.join()
        gc.collect()
        sys.unraisablehook = self._previous

    def install(self, _rec) -> None:
        if not self.installed:
            asyncio.get_running_loop()  # in the engine's loop: the hooks are per thread, set by run_forever
            sys.set_asyncgen_hooks(firstiter=None, finalizer=None)
            self.installed = True

    def _collect(self) -> None:
        while not self._stop.wait(0.05):
            gc.collect()

    def _note(self, unraisable) -> None:
        self.ignored.append(f"{unraisable.object!r}: {unraisable.exc_type.__name__}: {unraisable.exc_value}")


def test_rotations_stream_errors_drops_stalls_and_stop_print_nothing_under_a_loop_without_hooks(
    make_simulator, db_path
):
    sim = make_simulator(backlog=300, heartbeat=0.05, rotate_after=0.3, rate=40, burst_every=0)
    # one fault per stream (the simulator gives a stream only one of them), each after the previous was seen
    # a step is armed once every reason it waits for was seen (both planted faults of the first step)
    steps = [
        (("connected",), {"http_5xx": 1, "stall": 1}),
        (("stalled", "server_error"), {"drop_mid_frame": 1, "fault_after": 3}),
        (("network",), {"stream_error": "processing_error", "fault_after": 3}),
    ]

    def done(rec) -> bool:
        reasons = rec.reasons()
        return not steps and "stream_error" in reasons and reasons.count("rotation") >= 3

    with LikeTheQtLoop() as qt_like:
        armed: list[tuple[dict, int]] = []  # the faults last asked for, and the rotations seen then

        def during(rec) -> None:
            qt_like.install(rec)
            rotations = rec.reasons().count("rotation")
            if steps and set(steps[0][0]) <= set(rec.reasons()) and rec.stored >= 300:
                armed[:] = [(steps.pop(0)[1], rotations)]
                sim.faults(**armed[0][0])
            elif armed and rotations >= armed[0][1] + 5 and not steps_seen(rec):
                # a rotation can end the stream that was given the fault before it fired: ask again
                armed[:] = [(armed[0][0], rotations)]
                sim.faults(**armed[0][0])

        def steps_seen(rec) -> bool:
            wanted = {0: {"stalled", "server_error"}, 1: {"network"}, 2: {"stream_error"}}[2 - len(steps)]
            return wanted <= set(rec.reasons())

        # connections this short (0.3 s rotations) count as short-lived, so each reconnect waits the server's
        # `retry:` at least and the backoff grows (stream/outcomes.py): the faults take longer to come round
        # a stall is 1 s of silence, 20 heartbeats: a busy machine's pauses are not mistaken for the planted stall
        rec = follow(
            sim,
            db_path,
            from_timestamp=OLD,
            stall_timeout=1.0,
            backoff_base=0.05,
            during=during,
            until=done,
            timeout=180,
        )
    assert qt_like.installed
    assert {"server_error", "stalled", "network", "stream_error", "rotation"} <= set(rec.reasons())
    dropped = "connection lost: the server broke off mid-message (RemoteProtocolError)"  # said in words
    assert dropped in [s.message for s in rec.states if s.reason == "network"], rec.states
    assert qt_like.ignored == [], "\n".join(qt_like.ignored)


# The window's own loop, in a child process so that this module stays free of Qt: the engine follows the simulator
# through rotations and faults under asyncio.Runner(loop_factory=qasync.QEventLoop), as ui/app/launch.py runs it.
UNDER_QT = """
import asyncio, gc, os, sys, threading
from pathlib import Path
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6.QtWidgets import QApplication
import qasync
from tenant_events.simulator.testing import start_simulator
from tenant_events.store import StoreWriter
from tenant_events.stream.engine import EngineConfig, StreamEngine
from tenant_events.stream.tokens import StaticTokenProvider

sim = start_simulator(backlog=300, heartbeat=0.05, rotate_after=0.3, rate=100, burst_every=0)
app = QApplication([])
stop = threading.Event()
threading.Thread(target=lambda: [gc.collect() for _ in iter(lambda: stop.wait(0.05), True)], daemon=True).start()

async def main():
    writer = await asyncio.to_thread(StoreWriter, Path(sys.argv[1]) / "qt.sqlite3")
    config = EngineConfig(sim.base_url, from_timestamp="2000-01-01T00:00:00Z", name="qt", stall_timeout=0.5,
                          backoff_base=0.05)
    engine = StreamEngine(config, StaticTokenProvider(sim.mint_token()), writer)
    task = asyncio.create_task(engine.run())

    async def reconnected(n):  # rotations every 0.3 s, and each fault, end a connection
        deadline = asyncio.get_running_loop().time() + 60
        while engine.stats.reconnects < n:
            assert asyncio.get_running_loop().time() < deadline, f"{engine.stats.reconnects} reconnects, not {n}"
            await asyncio.sleep(0.05)

    await reconnected(3)
    sim.faults(drop_mid_frame=2, stall=1, http_5xx=1, fault_after=5)
    await reconnected(engine.stats.reconnects + 6)  # the four faults and two rotations after them
    engine.stop()
    await task
    await asyncio.to_thread(writer.close)
    print("reconnects", engine.stats.reconnects, "stored", engine.stats.events_stored, file=sys.stderr)

with asyncio.Runner(loop_factory=qasync.QEventLoop) as runner:
    runner.run(main())
stop.set()
gc.collect()
sim.stop()
"""


def test_rotations_under_the_windows_qt_loop_print_nothing(tmp_path: Path) -> None:
    proc = CliProcess(
        [sys.executable, "-c", UNDER_QT, str(tmp_path)],
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    _STARTED.remove(proc)  # checked here, with its output
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err[-3000:]
    reconnects = int(err.rsplit("reconnects ", 1)[1].split()[0])
    assert reconnects >= 5, err[-3000:]
    assert unraisable_printed([proc]) is None and "Exception ignored" not in err, err[-6000:]


def test_a_cli_subprocess_that_prints_an_unraisable_exception_fails_its_test():
    """The suite's check on every `cli()` subprocess (helpers/fixtures_engine.py), fed what Python does with an
    exception raised where nobody can catch it (here: in __del__, as in a generator finalised off the loop)."""
    script = (
        "import sys\n"
        "class Finalised:\n"
        "    def __del__(self):\n"
        "        raise RuntimeError('no running event loop')\n"
        "Finalised()\n"
        "print('tenant-events: stopped', file=sys.stderr)\n"
    )
    proc = CliProcess(
        [sys.executable, "-c", script], text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    _STARTED.remove(proc)  # checked here, not after the test
    _, err = proc.communicate(timeout=30)
    assert "Exception ignored in" in err  # what the user saw
    printed = unraisable_printed([proc])
    assert printed and "RuntimeError: no running event loop" in printed and "Finalised.__del__" in printed
    clean = CliProcess(
        [sys.executable, "-c", "print('fine')"], text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    _STARTED.remove(clean)
    clean.communicate(timeout=30)
    assert unraisable_printed([clean]) is None
