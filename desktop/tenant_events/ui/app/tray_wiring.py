"""The tray icon's side of the app: its menu wired to the window, the tenants and the notification choices, and
its icon, tooltip and tenant list kept up to date (the worst state of all tenants wins, view/tenant_status.py).
The alerts' part: the newest alerts and the do-not-disturb line in the menu (ui/alerts/alert_menu.py), the unread and
muted badges on the icon (ui/tray/badge.py).

Without a system tray (`Tray.available()` is False) there is no `TrayWiring`: the window is the app.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from tenant_events.alerts.delivery import MuteState
from tenant_events.ui.alerts.alert_menu import TrayAlertMenu
from tenant_events.ui.alerts.notification_choices import NotificationChoices
from tenant_events.ui.app.tenant_roster import TenantRoster
from tenant_events.ui.tray.tray_icon import Tray
from tenant_events.ui.window.main_window import MainWindow
from tenant_events.view.tenant_status import tooltip, worst


class TrayWiring:
    """Connects the tray's menu; `update()` redraws it from the tenants' states."""

    def __init__(
        self,
        tray: Tray,
        window: MainWindow,
        tenants: TenantRoster,
        notifications: NotificationChoices,
        spawn: Callable[[Awaitable[Any]], object],
    ) -> None:
        self.tray, self._window, self._tenants = tray, window, tenants
        tray.open_requested.connect(window.bring_to_front)
        tray.toggle_requested.connect(self.toggle_window)
        tray.dnd_requested.connect(notifications.set_dnd)
        tray.notify_types_changed.connect(notifications.set_types)
        tray.tenant_selected.connect(self.show_tenant)
        tray.sign_in_requested.connect(lambda name: spawn(tenants.sign_in(name)))
        tray.sign_out_requested.connect(lambda name: spawn(tenants.sign_out(name)))
        tenants.changed.connect(self.update)
        window.unread_changed.connect(lambda _n: self.update())
        window.closed_to_tray.connect(self.closed_to_tray)
        window.keep_in_tray = True
        alerts = notifications.alerts
        self.alert_menu = TrayAlertMenu(tray.menu, tray.pause_action, tray)
        self.alert_menu.inbox_requested.connect(lambda: alerts.open_inbox("", 0))
        self.alert_menu.alert_requested.connect(alerts.open_inbox)
        self.alert_menu.mark_all_requested.connect(alerts.mark_all_read)
        self.alert_menu.mute_off_requested.connect(lambda: notifications.set_dnd(0.0))
        alerts.entries_changed.connect(self.alert_menu.set_entries)
        alerts.mute_changed.connect(self.show_mute)
        alerts.refresh()

    def show_mute(self, mute: MuteState, unread: int) -> None:
        """Do-not-disturb / quiet hours and the unread alerts: badge, the menu line with its end, the tooltip."""
        text = mute.text()
        self.alert_menu.set_mute(text, mute.reason == "do_not_disturb")
        lines = [text + " (alerts are still kept)"] if text else []
        if unread:
            lines.append(f"{unread} unread alert{'' if unread == 1 else 's'}")
        self.tray.set_badges(unread, mute.muted, lines)

    def update(self) -> None:
        statuses = self._tenants.statuses()
        self.tray.set_state(worst(statuses), tooltip(statuses, self._window.unread))
        self.tray.set_tenants(self._tenants.signed_in())

    def show_tenant(self, name: str) -> None:
        self._window.show_tenant(name)
        self._window.bring_to_front()

    def toggle_window(self) -> None:
        if self._window.isVisible() and self._window.isActiveWindow():
            self._window.hide()
        else:
            self._window.bring_to_front()

    def closed_to_tray(self) -> None:
        """Say once that closing the window did not quit."""
        if not self._window.tray_hint_shown:
            self._window.tray_hint_shown = True
            self.tray.icon.showMessage(
                "Tenant Events is still running",
                "It keeps following your tenants from the tray. Quit from its menu.",
            )
