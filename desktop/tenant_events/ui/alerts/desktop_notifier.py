"""Shows a notification: natively through desktop-notifier, on the tray balloon otherwise.

desktop-notifier talks to org.freedesktop.Notifications over D-Bus (dbus-fast on this qasync loop) and gives a
default "clicked" action plus a "Show" button; `send()` never raises, it only logs, so a missing daemon is
detected up front with `get_capabilities()`. The tray balloon is the fallback; its `messageClicked` runs the
last notification's click. What to show, and when, is decided before this (ui/alerts/alert_notes.py
over alerts/delivery.py); every notification comes with its own click.

An alert is one notification: its next firing replaces the one still shown, and a notification the user or the
daemon already closed (dismissed, expired) is simply not there to take away: desktop-notifier raises KeyError
for an identifier it has forgotten, so nothing it raises while taking one away ever stops the next one
(`_take_away`). The library also forgets a notification as soon as its action is invoked, though a daemon may
keep showing it (dunst does, for `dunstctl action`): the daemon's own id of each notification is kept, and such
a one is closed with the notification service's CloseNotification directly. `withdraw(key)` takes an alert's notification away (acknowledged, resolved), `withdraw_all()` every
notification of the app (it quits). A notification the user opens (a click, "Show") is closed as it opens: what it
was about is on screen now.

Expiry follows the notification spec's urgency semantics: a critical notification stays until the user dismisses it
(expire_timeout 0), the others leave expiry to the desktop (-1), so an administrator away from the screen for a
few seconds still finds "Mass deletion" there.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from desktop_notifier import Button, DesktopNotifier, Icon, Urgency
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QSystemTrayIcon

from tenant_events.paths import resource_path
from tenant_events.server_text import shown

log = logging.getLogger(__name__)
APP_NAME = "Tenant Events"
_URGENCY = {"low": Urgency.Low, "normal": Urgency.Normal, "critical": Urgency.Critical}
UNTIL_DISMISSED = 0  # desktop-notifier's timeout in seconds; 0 becomes expire_timeout 0 on the bus
DESKTOP_DEFAULT = -1  # expire_timeout -1: the daemon decides
KEPT_KEYS = 200  # notifications remembered for replacing
PROBE_WAIT_S = 3.0  # the daemon's answer to "what can you do"
PROBE_AGAIN_S = 30.0  # after no answer in time (a busy machine): the tray meanwhile, then asked again


def expiry_for(urgency: str) -> int:
    """Critical stays until dismissed; everything else expires as the desktop usually does."""
    return UNTIL_DISMISSED if urgency == "critical" else DESKTOP_DEFAULT


class Notifier(QObject):
    delivered = Signal(str, str)  # title, backend ("native" | "tray")

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.tray: QSystemTrayIcon | None = None
        self._native: DesktopNotifier | None = None
        self._native_ok: bool | None = None
        self._probing = asyncio.Lock()  # one probe: a burst of alerts must not race it
        self._probe_again_at: float | None = None  # a probe that got no answer in time is made again then
        self._balloon_clicked_cb: Callable[[], None] | None = None
        # key (one alert) → its latest notification: the library's identifier and the daemon's id (None: unknown)
        self._on_screen: dict[str, tuple[str, int | None]] = {}
        self._tasks: set[asyncio.Future[None]] = set()  # notifications being closed as they were opened
        # key → the notification of it being sent: taking it away, or saying it again, meanwhile replaces it
        self._sending: dict[str, object] = {}

    def attach_tray(self, tray: QSystemTrayIcon | None) -> None:
        self.tray = tray
        if tray is not None:
            tray.messageClicked.connect(self._balloon_clicked)

    async def probe(self) -> bool:
        """Whether a notification daemon answers on the session bus (cached).

        Asked once, under a lock: a burst of notifications (a catch-up raises many alerts at once) would
        otherwise open a D-Bus client each. A daemon that does not answer in time is asked again after a while
        (until then the tray balloon): one slow answer at a busy moment no longer sent every notification of
        the session to the tray."""
        async with self._probing:
            again = self._probe_again_at is not None and time.monotonic() >= self._probe_again_at
            if self._native_ok is None or again:
                if self._native is None:
                    icon = Icon(path=resource_path("icons", "png", "tenant-events-128.png"))
                    self._native = DesktopNotifier(app_name=APP_NAME, app_icon=icon)
                self._probe_again_at = None
                try:
                    caps = await asyncio.wait_for(self._native.get_capabilities(), PROBE_WAIT_S)
                    self._native_ok = True
                    log.info("notification daemon capabilities: %s", sorted(c.name for c in caps))
                except TimeoutError:
                    # a daemon too busy to answer now (a loaded machine): not "none" for good
                    log.info(
                        "the notification daemon did not answer within %.0f s: the tray balloon meanwhile,"
                        " asked again in %.0f s",
                        PROBE_WAIT_S,
                        PROBE_AGAIN_S,
                    )
                    self._native_ok = False
                    self._probe_again_at = time.monotonic() + PROBE_AGAIN_S
                except Exception as exc:  # no bus, no daemon: fall back to the tray balloon
                    log.info("no native notifications (%r): using the tray balloon", exc)
                    self._native_ok = False
            return self._native_ok

    async def show(
        self, title: str, body: str, urgency: str, clicked: Callable[[], None], key: str = ""
    ) -> str:
        """One notification (native, else the tray balloon); `clicked` runs on a click or "Show". Returns the
        backend used ("native" | "tray" | ""). Title and each body line may quote the tenant: escaped and cut.
        A `key` names what it is about (one alert): its earlier notification, if still shown, is taken away, so
        an alert that fires again is one notification, not a stack of them that stay until dismissed."""
        title = shown(title, 120)
        body = "\n".join(shown(line) for line in body.split("\n")[:4])
        asked = object()
        if key:
            self._sending[key] = asked
        try:
            return await self._show(title, body, urgency, clicked, key, asked)
        finally:
            if key and self._sending.get(key) is asked:
                del self._sending[key]

    async def _show(
        self, title: str, body: str, urgency: str, clicked: Callable[[], None], key: str, asked: object
    ) -> str:
        if await self.probe() and self._native is not None:
            earlier = self._on_screen.pop(key, None) if key else None
            if earlier is not None:
                await self._take_away(*earlier)
            sent: list[tuple[str, int | None]] = []

            def opened() -> None:
                """Clicked, or "Show": what it is about opens, and the notification goes (a critical one, which
                stays until dismissed, would otherwise stay on screen over what it opened)."""
                clicked()
                if sent:
                    self._closing(key, *sent[0])

            try:
                identifier = await self._native.send(
                    title=title,
                    message=body,
                    urgency=_URGENCY.get(urgency, Urgency.Normal),
                    buttons=(Button(title="Show", on_pressed=opened),),
                    on_clicked=opened,
                    timeout=expiry_for(urgency),
                )
            except Exception as exc:  # never lose an alert to the library: the tray balloon says it
                log.warning("the notification daemon did not take %r (%r); trying the tray", title, exc)
            else:
                sent.append((identifier, self._daemon_id(identifier)))
                if key and self._sending.get(key) is not asked:  # taken away, or said again, meanwhile
                    self._closing(key, *sent[0])
                elif key:
                    self._on_screen[key] = sent[0]
                    while len(self._on_screen) > KEPT_KEYS:  # the oldest are long gone from the screen
                        del self._on_screen[next(iter(self._on_screen))]
                self.delivered.emit(title, "native")
                return "native"
        if self.tray is not None and self.tray.isVisible():
            self._balloon_clicked_cb = clicked
            self.tray.showMessage(title, body, QSystemTrayIcon.MessageIcon.Information, 10_000)
            self.delivered.emit(title, "tray")
            return "tray"
        log.info("notification not shown (no daemon, no tray): %s", title)
        return ""

    def _closing(self, key: str, identifier: str, daemon_id: int | None) -> None:
        """Close a notification that was just opened (on the loop: the click arrives in a D-Bus callback)."""
        if key and self._on_screen.get(key, ("",))[0] == identifier:
            del self._on_screen[key]
        task = asyncio.ensure_future(self._take_away(identifier, daemon_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def withdraw(self, key: str) -> None:
        """Take the notification of `key` (one alert) away, if it is still shown (or once it is, if being sent)."""
        self._sending.pop(key, None)
        earlier = self._on_screen.pop(key, None)
        if earlier is not None:
            await self._take_away(*earlier)

    async def withdraw_all(self) -> None:
        """Take every notification of the app away (it quits)."""
        shown, self._on_screen = list(self._on_screen.values()), {}
        if self._native is not None and self._native_ok:
            for identifier, daemon_id in shown:
                await self._take_away(identifier, daemon_id)
            for identifier in await self._native.get_current_notifications():
                await self._take_away(identifier, None)

    async def _take_away(self, identifier: str, daemon_id: int | None) -> None:
        """Close one notification: through the library while it knows it, else by the daemon's id (the library
        forgot it when its action was invoked; the daemon may still show it). One the daemon already closed is
        left alone, and no error of the library's or the daemon's stops what comes next."""
        native = self._native
        if native is None:
            return
        try:
            if identifier in await native.get_current_notifications():
                await native.clear(identifier)
            elif daemon_id is not None:
                interface = getattr(getattr(native, "_backend", None), "interface", None)
                if interface is not None:
                    await interface.call_close_notification(daemon_id)
        except Exception as exc:  # the daemon went away, or had closed it already
            log.debug("notification %s not taken away: %r", identifier, exc)

    def _daemon_id(self, identifier: str) -> int | None:
        """The daemon's id of a notification the library just sent (desktop-notifier's D-Bus backend keeps the
        two apart and forgets the pair when an action is invoked; None on another backend)."""
        backend = getattr(self._native, "_backend", None)
        pairs = getattr(backend, "_platform_to_interface_notification_identifier", None)
        inverse = getattr(pairs, "inverse", None)
        found = inverse.get(identifier) if inverse is not None else None
        return found if isinstance(found, int) else None

    def _balloon_clicked(self) -> None:
        if self._balloon_clicked_cb is not None:
            self._balloon_clicked_cb()
