"""One send on a daemon thread of its own, waited for until its deadline and a grace.

Apprise blocks, and a send can outlive its deadline (a name lookup that hangs): on a daemon thread it never holds
the process's exit, and the lane waiting for it goes on with "no answer" once the wait is over.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable

from tenant_events.destinations.message import AlertMessage
from tenant_events.destinations.send import Outcome

Sender = Callable[[str, AlertMessage], Outcome]


async def send_in_thread(sender: Sender, url: str, message: AlertMessage, wait: float) -> Outcome:
    """`sender(url, message)`'s outcome, or a retry when it has not answered within `wait` seconds."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Outcome] = loop.create_future()

    def settle(outcome: Outcome | None, error: BaseException | None) -> None:
        if done.done():
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(outcome or Outcome("retry", "no outcome"))

    def run() -> None:
        try:
            result: Outcome | None = sender(url, message)
            error: BaseException | None = None
        except BaseException as exc:  # handed to the lane, which logs it
            result, error = None, exc
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits any more
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=run, name="alert-send", daemon=True).start()
    try:
        return await asyncio.wait_for(asyncio.shield(done), wait)
    except TimeoutError:
        return Outcome("retry", f"no answer within {wait:g} s")
