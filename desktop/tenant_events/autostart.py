"""Start at login: an XDG autostart entry that starts the app hidden in the tray."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

ENTRY_NAME = "io.github.tenantevents.TenantEvents.desktop"


def entry_path() -> Path:
    config = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return config / "autostart" / ENTRY_NAME


def command() -> str:
    if getattr(sys, "frozen", False):
        return f"{shlex.quote(sys.executable)} --minimized"
    return f"{shlex.quote(sys.executable)} -m tenant_events --minimized"


def set_enabled(enabled: bool) -> None:
    path = entry_path()
    if not enabled:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)  # may not exist yet (autokey/autokey#178)
    path.write_text(
        "[Desktop Entry]\nType=Application\nName=Tenant Events\n"
        f"Exec={command()}\nIcon=io.github.tenantevents.TenantEvents\n"
        "X-GNOME-Autostart-enabled=true\nX-GNOME-UsesNotifications=true\n",
        encoding="utf-8",
    )
