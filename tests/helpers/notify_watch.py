"""Watching the session bus for `org.freedesktop.Notifications.Notify` calls, as the real daemon receives them.

`dbus-monitor` (a bus monitor: it sees every matching call, whoever sends it) runs as a child; each Notify call
becomes a `SeenNotify` with its summary, body, urgency hint (0 low, 1 normal, 2 critical) and expire_timeout
(ms; 0: until dismissed, -1: the daemon's default).
"""

from __future__ import annotations

import re
import subprocess
import threading
import time
from dataclasses import dataclass
from types import TracebackType

_FIELD = re.compile(r'^   string "(.*?)"$', re.M | re.S)
_EXPIRE = re.compile(r"^   int32 (-?\d+)$", re.M)
_URGENCY = re.compile(r'string "urgency"\s*\n\s*variant\s+byte (\d+)')
URGENCY_NAMES = {0: "low", 1: "normal", 2: "critical"}


@dataclass(frozen=True)
class SeenNotify:
    app: str
    summary: str
    body: str
    urgency: str
    at: float  # time.time() when the monitor printed it
    expire_timeout: int | None = None  # Notify's last argument, in ms


class NotifyWatch:
    """`with NotifyWatch() as watch: ... watch.seen` — the Notify calls made while it ran."""

    def __init__(self) -> None:
        self.seen: list[SeenNotify] = []
        self._proc: subprocess.Popen[str] | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()

    def __enter__(self) -> NotifyWatch:
        self._proc = subprocess.Popen(
            [
                "dbus-monitor",
                "--session",
                "type='method_call',interface='org.freedesktop.Notifications',member='Notify'",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise AssertionError("dbus-monitor did not start")
        return self

    def __exit__(self, *_exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        if self._proc is not None:
            self._proc.terminate()
            self._proc.wait(10)
        if self._thread is not None:
            self._thread.join(10)

    def of(self, summary_prefix: str) -> list[SeenNotify]:
        return [n for n in self.seen if n.summary.startswith(summary_prefix)]

    def _read(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        block: list[str] = []
        for line in self._proc.stdout:
            if line.startswith(("signal ", "method call ", "method return ", "error ")):
                self._ready.set()  # the monitor's own NameAcquired signal comes first
                self._take(block)
                block = [line] if "member=Notify" in line else []
            elif block:
                block.append(line)
                if line.startswith("   int32 "):  # the expiry timeout: Notify's last argument
                    self._take(block)
                    block = []
        self._take(block)

    def _take(self, block: list[str]) -> None:
        if not block:
            return
        text = "".join(block[1:])
        fields = _FIELD.findall(text)
        urgency = _URGENCY.search(text)
        expire = _EXPIRE.findall(text)
        if len(fields) >= 4:
            level = int(urgency.group(1)) if urgency else 1
            timeout = int(expire[-1]) if expire else None
            self.seen.append(
                SeenNotify(
                    fields[0], fields[2], fields[3], URGENCY_NAMES.get(level, "?"), time.time(), timeout
                )
            )
