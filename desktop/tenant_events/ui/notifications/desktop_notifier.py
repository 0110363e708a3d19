"""Delivers `NotifyPolicy` output: native notifications through desktop-notifier, the tray balloon otherwise.

desktop-notifier talks to org.freedesktop.Notifications over D-Bus (dbus-fast on this qasync loop) and gives a
default "clicked" action plus a "Show" button; `send()` never raises, it only logs, so a
missing daemon is detected up front with `get_capabilities()`. The tray balloon is the fallback; its
`messageClicked` runs the last notification's click. Per-type notifications emit `show_requested(tenant, seq)`
(0: no one event) on a click; alert notifications (ui/notifications/alert_notes.py) pass their own click.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from desktop_notifier import Button, DesktopNotifier, Icon, Urgency
from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QSystemTrayIcon

from tenant_events.notifications.policy import Candidate, NotifyPolicy, Outgoing
from tenant_events.paths import resource_path

log = logging.getLogger(__name__)
APP_NAME = "Tenant Events"
_URGENCY = {"low": Urgency.Low, "normal": Urgency.Normal, "critical": Urgency.Critical}


class Notifier(QObject):
    show_requested = Signal(str, int)  # tenant, stored seq of the event (0: none)
    delivered = Signal(str, str)  # title, backend ("native" | "tray")

    def __init__(self, policy: NotifyPolicy, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.policy = policy
        self.tray: QSystemTrayIcon | None = None
        self._native: DesktopNotifier | None = None
        self._native_ok: bool | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._balloon_target: Candidate | None = None
        self._balloon_clicked_cb: Callable[[], None] | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.flush)

    def attach_tray(self, tray: QSystemTrayIcon | None) -> None:
        self.tray = tray
        if tray is not None:
            tray.messageClicked.connect(self._balloon_clicked)

    async def probe(self) -> bool:
        """Whether a notification daemon answers on the session bus (cached)."""
        if self._native_ok is None:
            icon = Icon(path=resource_path("icons", "png", "tenant-events-128.png"))
            self._native = DesktopNotifier(app_name=APP_NAME, app_icon=icon)
            try:
                caps = await asyncio.wait_for(self._native.get_capabilities(), 3)
                self._native_ok = True
                log.info("notification daemon capabilities: %s", sorted(c.name for c in caps))
            except Exception as exc:  # no bus, no daemon: fall back to the tray balloon
                log.info("no native notifications (%s): using the tray balloon", exc)
                self._native_ok = False
        return self._native_ok

    def offer(self, events: list[Candidate]) -> None:
        if self.policy.offer(events) and not self._timer.isActive():
            self._timer.start(int(self.policy.window_s * 1000))

    def flush(self) -> None:
        for out in self.policy.flush():
            self._spawn(self._deliver(out))

    async def close(self) -> None:
        self._timer.stop()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)  # the loop keeps only weak references (qasync#159)
        task.add_done_callback(self._tasks.discard)

    async def _deliver(self, out: Outgoing) -> None:
        target = out.target

        def clicked() -> None:
            self.show_requested.emit(target.tenant if target else "", target.seq if target else 0)

        self._balloon_target = out.target
        await self.show(out.title, out.body, "critical" if out.urgent else "normal", clicked)

    async def show(self, title: str, body: str, urgency: str, clicked: Callable[[], None]) -> str:
        """One notification (native, else the tray balloon); `clicked` runs on a click or "Show". Returns the
        backend used ("native" | "tray" | "")."""
        if await self.probe() and self._native is not None:
            await self._native.send(
                title=title,
                message=body,
                urgency=_URGENCY.get(urgency, Urgency.Normal),
                buttons=(Button(title="Show", on_pressed=clicked),),
                on_clicked=clicked,
                timeout=10,
            )
            self.delivered.emit(title, "native")
            return "native"
        if self.tray is not None and self.tray.isVisible():
            self._balloon_clicked_cb = clicked
            self.tray.showMessage(title, body, QSystemTrayIcon.MessageIcon.Information, 10_000)
            self.delivered.emit(title, "tray")
            return "tray"
        log.info("notification not shown (no daemon, no tray): %s", title)
        return ""

    def _balloon_clicked(self) -> None:
        if self._balloon_clicked_cb is not None:
            self._balloon_clicked_cb()
