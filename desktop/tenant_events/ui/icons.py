"""QIcons built from resources/icons: every PNG size in one QIcon so HiDPI panels pick a sharp one."""

from __future__ import annotations

from enum import StrEnum
from functools import cache

from PySide6.QtGui import QIcon

from tenant_events.paths import resource_path

APP_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)
TRAY_SIZES = (16, 22, 24, 32, 44, 48, 64)


class TrayState(StrEnum):
    """What the tray icon shows, worst state of all tenants first in `SEVERITY`."""

    LIVE = "live"
    CATCHING_UP = "catching-up"
    RECONNECTING = "reconnecting"
    PAUSED = "paused"
    SIGNED_OUT = "signed-out"
    ERROR = "error"


SEVERITY = (
    TrayState.ERROR,
    TrayState.SIGNED_OUT,
    TrayState.RECONNECTING,
    TrayState.CATCHING_UP,
    TrayState.PAUSED,
    TrayState.LIVE,
)


@cache
def app_icon() -> QIcon:
    icon = QIcon()
    for size in APP_SIZES:
        icon.addFile(str(resource_path("icons", "png", f"tenant-events-{size}.png")))
    return icon


@cache
def tray_icon(state: TrayState, panel: str = "dark") -> QIcon:
    """`panel` is the panel's colour: "dark" gets the light glyph and vice versa."""
    icon = QIcon()
    for size in TRAY_SIZES:
        icon.addFile(str(resource_path("icons", "tray", "png", f"tray-{state.value}-{panel}-{size}.png")))
    return icon
