"""The alert rules' process: evaluates a tenant database's committed events beside the process that stores them.

    parent (stores)  ──stdin: start, kick, rules──▶  this process (os.nice) ──▶ AlertRunner ──▶ Evaluator.step
                     ◀──stdout: each StepResult──                               on its own connection

Started by evaluator_process.py as `tenant-events _alert-evaluator` (the same interpreter, or the frozen app),
with PR_SET_PDEATHSIG: it ends when its parent does, even after SIGKILL, and when its stdin closes (the parent
stopped it). Storing never waits for it: the parent only tells it that something was committed, and it reads the
rows by seq on its own connection, at a lower CPU priority, as fast as it can. What it raises it writes itself,
with its watermark, in one transaction (store/alerts_table.py), so a SIGKILL of either process loses and
repeats nothing. Frames on both pipes are a 4-byte length and a pickle: both ends are this program.
"""

from __future__ import annotations

import asyncio
import logging
import os
import pickle
import struct
import sys
import threading
from pathlib import Path
from typing import IO, Any, Final

from tenant_events.alert_settings import AlertSettings
from tenant_events.alerts.evaluator import Evaluator
from tenant_events.alerts.from_settings import build_evaluator
from tenant_events.alerts.runner import AlertRunner
from tenant_events.store.alert_connection import AlertConnection, FilesGone

log = logging.getLogger(__name__)
CHILD_ARG: Final = "_alert-evaluator"  # the hidden first argument of `tenant-events` that runs this process
# Below the process that stores: when both want a core, the store gets three times the rules' share (CFS weights
# 1024 and 335). At 10 (a tenth) a machine loaded by other work all but stopped the rules: a 60,000-event catch-up
# was not evaluated within the tests' bounds.
NICENESS: Final = 5
_HEAD: Final = struct.Struct("!I")
EXIT_FILES_GONE: Final = 75  # a file of the database was removed under this process (EX_TEMPFAIL)


def write_frame(out: IO[bytes], message: object) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    out.write(_HEAD.pack(len(data)) + data)
    out.flush()


def read_frame(inp: IO[bytes]) -> Any:
    """The next message; EOFError when the other end closed its pipe."""
    head = inp.read(_HEAD.size)
    if len(head) < _HEAD.size:
        raise EOFError
    data = inp.read(_HEAD.unpack(head)[0])
    return pickle.loads(data)  # noqa: S301 - written by the parent, this same program


def rules_from(settings_json: str, tenant: str, by_received: bool) -> Evaluator:
    """The evaluator of the settings' valid rules (the parent already refused invalid ones where it must)."""
    settings = AlertSettings.model_validate_json(settings_json)
    return build_evaluator(settings, tenant, strict=False, by_received=by_received)


def main() -> int:
    """The process's body: the start frame, then steps until stdin closes."""
    logging.basicConfig(level=logging.WARNING, format="tenant-events alerts: %(message)s")
    try:
        os.nice(NICENESS)
    except OSError:  # not allowed here: evaluate at the parent's priority
        log.debug("niceness not changed")
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    try:
        start = read_frame(inp)
    except EOFError:
        return 0
    asyncio.run(_serve(start, inp, out))
    return 0


async def _serve(start: dict[str, Any], inp: IO[bytes], out: IO[bytes]) -> None:
    loop = asyncio.get_running_loop()
    tenant, by_received = str(start["tenant"]), bool(start["by_received"])
    evaluator = rules_from(start["settings"], tenant, by_received)
    evaluator.resume = start.get("resume")
    store = AlertConnection(Path(start["database"]))
    runner = AlertRunner(evaluator, lambda: store)
    runner.on_step.append(lambda result: write_frame(out, result))

    def failed(exc: BaseException) -> None:
        if isinstance(exc, FilesGone):  # ended without closing the connection (alert_connection.py); the
            out.flush()  # parent starts another, and the writer says what happened to the files
            os._exit(EXIT_FILES_GONE)
        write_frame(out, ("failed", str(exc)))

    runner.on_failure.append(failed)
    closed = asyncio.Event()

    def heard(message: tuple[Any, ...]) -> None:
        if message[0] == "rules":
            runner.evaluator = rules_from(message[1], tenant, by_received)
        runner.kick()

    def listen() -> None:
        while True:
            try:
                message = read_frame(inp)
            except (EOFError, OSError, ValueError):
                loop.call_soon_threadsafe(closed.set)
                return
            loop.call_soon_threadsafe(heard, message)

    threading.Thread(target=listen, name="alerts-parent", daemon=True).start()
    runner.kick()
    await closed.wait()
    runner.close()
    await runner.idle()
    store.close()
