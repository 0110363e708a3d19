"""QIcons built from resources/icons: every PNG size in one QIcon so HiDPI panels pick a sharp one."""

from __future__ import annotations

from functools import cache

from PySide6.QtGui import QIcon

from tenant_events.paths import resource_path
from tenant_events.view.tenant_status import TrayState

APP_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)
TRAY_SIZES = (16, 22, 24, 32, 44, 48, 64)


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
