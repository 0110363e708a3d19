"""Tells the engine to reconnect at once after sleep or when the network comes back.

Three hints, each harmless if wrong (shared/reference/desktop.md §6):
  * wall clock vs monotonic clock: CLOCK_MONOTONIC stops during suspend, time.time() does not, so a tick
    whose wall delta exceeds its monotonic delta by `jump_s` means a resume (or an NTP step);
  * logind `PrepareForSleep(false)` on the system bus (missing in containers and on hypervisor pause);
  * QNetworkInformation reachability turning Online.
Each emits `woke(reason)`; the app calls `nudge()` on every tenant's engine.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from PySide6.QtCore import SLOT, QObject, QTimer, Signal, Slot
from PySide6.QtDBus import QDBusConnection
from PySide6.QtNetwork import QNetworkInformation

log = logging.getLogger(__name__)

Clock = Callable[[], float]


class WakeWatcher(QObject):
    woke = Signal(str)

    def __init__(
        self,
        tick_ms: int = 2000,
        jump_s: float = 5.0,
        wall: Clock = time.time,
        mono: Clock = time.monotonic,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._wall, self._mono, self.jump_s = wall, mono, jump_s
        self._last = (wall(), mono())
        self._timer = QTimer(self)
        self._timer.setInterval(tick_ms)
        self._timer.timeout.connect(self.check_clock)
        self._network: QNetworkInformation | None = None
        self._online: bool | None = None

    def start(self) -> None:
        self._timer.start()
        self._watch_logind()
        self._watch_network()

    def stop(self) -> None:
        self._timer.stop()

    @Slot()
    def check_clock(self) -> None:
        wall, mono = self._wall(), self._mono()
        lost = (wall - self._last[0]) - (mono - self._last[1])
        self._last = (wall, mono)
        if abs(lost) > self.jump_s:
            log.info("wall clock jumped %.1f s past the monotonic clock: treating it as a resume", lost)
            self.woke.emit(f"clock jump {lost:+.0f} s")

    def _watch_logind(self) -> None:
        bus = QDBusConnection.systemBus()
        if not bus.isConnected():
            log.debug("no system bus: logind PrepareForSleep unavailable")
            return
        # The stubs say bytes, but PySide 6.x raises ValueError for a bytes slot at run time; SLOT() gives the
        # "1name(args)" str it accepts (tests/ui/test_wake_logind.py, a fake login1 on a private system bus).
        ok = bus.connect(  # type: ignore[call-overload]
            "org.freedesktop.login1",
            "/org/freedesktop/login1",
            "org.freedesktop.login1.Manager",
            "PrepareForSleep",
            self,
            SLOT("on_prepare_for_sleep(bool)"),
        )
        log.debug("logind PrepareForSleep subscription: %s", ok)

    @Slot(bool)
    def on_prepare_for_sleep(self, sleeping: bool) -> None:
        if not sleeping:
            self.woke.emit("resumed from sleep")

    def _watch_network(self) -> None:
        if not QNetworkInformation.loadDefaultBackend():
            log.debug("no QNetworkInformation backend")
            return
        self._network = QNetworkInformation.instance()
        if self._network is None:
            return
        self._online = self._network.reachability() == QNetworkInformation.Reachability.Online
        self._network.reachabilityChanged.connect(self.on_reachability)

    @Slot(QNetworkInformation.Reachability)
    def on_reachability(self, reach: QNetworkInformation.Reachability) -> None:
        online = reach == QNetworkInformation.Reachability.Online
        if online and self._online is False:
            self.woke.emit("network is back")
        self._online = online
