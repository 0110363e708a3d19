"""The tray icon and its menu; the window's on/off switch and the app's quiet face.

Menu: Open · Pause/Resume stream · Notifications ▸ (per family/type, Do not disturb) ·
Tenants ▸ · Sign in/out · Quit. Actions only emit signals; the app wires them to the window and engines.
Where no tray host exists (`isSystemTrayAvailable()` False), the app keeps a normal window instead.
"""

from __future__ import annotations

import logging
from functools import partial

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from tenant_events.ui.look.icons import tray_icon
from tenant_events.ui.tray.badge import badged
from tenant_events.view.tenant_status import TrayState
from tenant_events.wire import EventType
from tenant_events.wire.event_types import DEFAULT_NOTIFY_NAMES

log = logging.getLogger(__name__)


class Tray(QObject):
    open_requested = Signal()
    toggle_requested = Signal()
    pause_toggled = Signal(bool)  # True = pause
    dnd_requested = Signal(float)  # seconds from now; 0 = off, -1 = until tomorrow
    notify_types_changed = Signal(set)
    tenant_selected = Signal(str)
    sign_in_requested = Signal(str)
    sign_out_requested = Signal(str)
    quit_requested = Signal()
    hub_requested = Signal()  # "Connect to a team hub…"

    def __init__(self, panel: str = "dark", parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.panel = panel
        self.state = TrayState.SIGNED_OUT
        self.icon = QSystemTrayIcon(tray_icon(self.state, panel), self)
        self.unread, self.muted, self._tooltip, self.tip_lines = 0, False, "", list[str]()
        self.icon.activated.connect(self._activated)
        self.menu = QMenu()
        self.menu.setAccessibleName("Tenant Events tray menu")
        self.open_action = self.menu.addAction("Open Tenant Events", self.open_requested.emit)
        self.pause_action = QAction("Pause stream", self.menu, checkable=True)
        # no shortcut shown: a tray menu has no keyboard focus to take Ctrl+P (the window's Pause has it)
        self.pause_action.toggled.connect(self._pause_toggled)
        self.menu.addAction(self.pause_action)
        self.notify_menu = self.menu.addMenu("Notifications")
        self.type_actions: dict[str, QAction] = {}
        self._build_notify_menu(set(DEFAULT_NOTIFY_NAMES))
        self.tenants_menu = self.menu.addMenu("Tenants")
        self.sign_menu = self.menu.addMenu("Sign in/out")
        self.hub_action = self.menu.addAction("Connect to a team hub…", self.hub_requested.emit)
        self.menu.addSeparator()
        self.quit_action = self.menu.addAction("Quit", self.quit_requested.emit)
        self.icon.setContextMenu(self.menu)

    @staticmethod
    def available() -> bool:
        return QSystemTrayIcon.isSystemTrayAvailable()

    def show(self) -> None:
        self.icon.show()
        # Start-up benchmarks and end-to-end tests wait for this line (bench/startup.py).
        log.info("tray icon shown (tray host available: %s)", self.available())

    def hide(self) -> None:
        self.icon.hide()

    def set_state(self, state: TrayState, tooltip: str) -> None:
        if state != self.state:
            self.state = state
            self.icon.setIcon(badged(tray_icon(state, self.panel), self.unread, self.muted))
        self._tooltip = tooltip
        self.icon.setToolTip("\n".join([tooltip, *self.tip_lines]))

    def set_badges(self, unread: int, muted: bool, tip_lines: list[str]) -> None:
        """Unread alerts and do-not-disturb on the icon (badge.py), and their lines under the tooltip."""
        if (unread, muted) != (self.unread, self.muted):
            self.unread, self.muted = unread, muted
            self.icon.setIcon(badged(tray_icon(self.state, self.panel), unread, muted))
        self.tip_lines = tip_lines
        self.icon.setToolTip("\n".join([self._tooltip, *tip_lines]))

    def set_paused(self, paused: bool) -> None:
        self.pause_action.blockSignals(True)
        self.pause_action.setChecked(paused)
        self.pause_action.setText("Resume stream" if paused else "Pause stream")
        self.pause_action.blockSignals(False)

    def set_tenants(self, tenants: list[tuple[str, bool]]) -> None:
        """`tenants`: (name, signed in) pairs."""
        self.tenants_menu.clear()
        self.sign_menu.clear()
        for name, signed_in in tenants:
            self.tenants_menu.addAction(name, partial(self.tenant_selected.emit, name))
            if signed_in:
                self.sign_menu.addAction(f"Sign out of {name}", partial(self.sign_out_requested.emit, name))
            else:
                self.sign_menu.addAction(f"Sign in to {name}", partial(self.sign_in_requested.emit, name))

    def set_notify_types(self, types: set[str]) -> None:
        for name, action in self.type_actions.items():
            action.blockSignals(True)
            action.setChecked(name in types)
            action.blockSignals(False)

    def _build_notify_menu(self, chosen: set[str]) -> None:
        m = self.notify_menu
        m.addAction("Do not disturb for 1 hour", lambda: self.dnd_requested.emit(3600.0))
        m.addAction("Do not disturb until tomorrow", lambda: self.dnd_requested.emit(-1.0))
        m.addAction("Notifications back on", lambda: self.dnd_requested.emit(0.0))
        m.addSeparator()
        families: dict[str, QMenu] = {}
        for t in EventType:
            fam = families.get(t.family) or m.addMenu(t.family.capitalize())
            families[t.family] = fam
            act = QAction(t.value, fam, checkable=True)
            act.setChecked(t.value in chosen)
            act.toggled.connect(self._types_changed)
            fam.addAction(act)
            self.type_actions[t.value] = act

    def _types_changed(self) -> None:
        self.notify_types_changed.emit({n for n, a in self.type_actions.items() if a.isChecked()})

    def _pause_toggled(self, checked: bool) -> None:
        self.set_paused(checked)
        self.pause_toggled.emit(checked)

    def _activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (QSystemTrayIcon.ActivationReason.Trigger, QSystemTrayIcon.ActivationReason.DoubleClick):
            self.toggle_requested.emit()
