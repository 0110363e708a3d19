"""Landing a SIGKILL in the narrow moment between a file written and the transaction that lists it: the kill tests
of the archive's mover and of settling."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable

from helpers.slack import bound


def stop_between_a_file_and_its_commit(
    child: subprocess.Popen[str], files: Callable[[], set[str]], listed: Callable[[], set[str]]
) -> bool:
    """Watch for the child's next file and freeze it (SIGSTOP) as it appears: True when that file is not listed
    yet (the kill that follows lands between the two); else it runs on to its next file, for a bound."""
    known, deadline = files(), time.monotonic() + bound(20)
    while child.poll() is None and time.monotonic() < deadline:
        new = files() - known
        if not new:
            time.sleep(0.0005)
            continue
        child.send_signal(signal.SIGSTOP)
        if new - listed():
            return True
        known |= new
        child.send_signal(signal.SIGCONT)
    return False
