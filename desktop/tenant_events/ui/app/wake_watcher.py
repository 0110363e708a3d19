"""Tells the engine to reconnect at once after sleep or when the network comes back.

Three hints, each harmless if wrong:
  * wall clock vs monotonic clock: CLOCK_MONOTONIC stops during suspend, time.time() does not, so a tick
    whose wall delta exceeds its monotonic delta by `jump_s` means a resume (or an NTP step);
  * logind `PrepareForSleep(false)` on the system bus (missing in containers and on hypervisor pause);
  * the kernel's routing table gaining a default route (a netlink subscription: the network came back).
Each emits `woke(reason)`; the app calls `nudge()` on every tenant's engine.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from PySide6.QtCore import SLOT, QObject, QSocketNotifier, QTimer, Signal, Slot
from PySide6.QtDBus import QDBusConnection

from tenant_events.ui.app.route_watch import RouteWatch

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
        self._routes: RouteWatch | None = None
        self._route_notifier: QSocketNotifier | None = None
        self._online: bool | None = None

    def start(self) -> None:
        self._timer.start()
        self._watch_logind()
        self._watch_network()

    def stop(self) -> None:
        self._timer.stop()
        if self._route_notifier is not None:
            self._route_notifier.setEnabled(False)
        if self._routes is not None:
            self._routes.close()
            self._routes = None

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
        # "1name(args)" str it accepts (tests/ui/app/test_wake_logind.py, a fake login1 on a private system bus).
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
        self._routes = RouteWatch.open()
        if self._routes is None:
            log.debug("no netlink route subscription: network changes are not watched")
            return
        self._online = self._routes.online()
        self._route_notifier = QSocketNotifier(self._routes.fileno(), QSocketNotifier.Type.Read, self)
        self._route_notifier.activated.connect(self.on_routes_changed)

    @Slot()
    def on_routes_changed(self) -> None:
        if self._routes is None:
            return
        self._routes.drain()
        online = self._routes.online()
        if online and self._online is False:
            self.woke.emit("network is back")
        self._online = online
