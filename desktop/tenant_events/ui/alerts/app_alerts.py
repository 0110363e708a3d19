"""Alerts in the app: notifications from each tenant's rules, the inbox, the unread count and do-not-disturb on
the window and the tray.

    TenantSession.alerts_evaluated ─▶ AlertNotes (notifications) ─▶ alerts_changed ─▶ refresh(): unread count on
    the window's Alerts button, the tray badge + menu list, the inbox if open
    notification / tray entry clicked ─▶ open_inbox(tenant, alert id)

DesktopApp owns one `AppAlerts` and calls `add_session`, `remove`, `apply`, `refresh_mute` and `close`.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Final

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QToolButton

from tenant_events.alert_settings import WorkingHours
from tenant_events.alerts.delivery import MuteState
from tenant_events.alerts.history import RuleTrial, try_rule
from tenant_events.alerts.rule_model import Rule
from tenant_events.paths import AppPaths
from tenant_events.settings import Settings
from tenant_events.store import AlertInbox
from tenant_events.store.records import StoredEvent
from tenant_events.ui.alerts.alert_book import AlertBook, InboxEntry
from tenant_events.ui.alerts.inbox_window import InboxWindow
from tenant_events.ui.alerts.table_filter import show_alert_events
from tenant_events.ui.alerts.tenant_rules import retune
from tenant_events.ui.app.tenant_session import TenantSession
from tenant_events.ui.notifications.alert_notes import AlertNotes
from tenant_events.ui.notifications.desktop_notifier import Notifier
from tenant_events.ui.tray.alert_menu import TrayAlertMenu
from tenant_events.ui.tray.tray_icon import Tray
from tenant_events.ui.window.main_window import MainWindow


def _trial(path: Path, rule: Rule, hours: WorkingHours, profile: str, days: float) -> RuleTrial | None:
    if not path.exists():
        return None
    with AlertInbox(path) as inbox:
        return try_rule(inbox, rule, hours=hours, profile=profile, days=days)


INBOX_KEYS: Final = "Ctrl+Shift+A"
MUTE_TICK_MS: Final = 15_000  # the tray's "until 14:30" and badge follow the clock this often


class AppAlerts(QObject):
    unread_changed = Signal(int)
    dnd_off_requested = Signal()

    def __init__(
        self,
        window: MainWindow,
        tray: Tray | None,
        notifier: Notifier,
        settings: Settings,
        paths: AppPaths,
    ) -> None:
        super().__init__(window)
        self.window, self.tray, self.settings = window, tray, settings
        self.paths = paths
        self._rules = settings.alerts.model_copy(deep=True)  # what the runners run, to see a change
        self.book = AlertBook(paths.database_file)
        self.notes = AlertNotes(notifier, settings.notifications, self)
        self.notes.alert_requested.connect(self.open_inbox)
        self.sessions: dict[str, TenantSession] = {}
        self.inbox: InboxWindow | None = None
        self.unread = 0
        self.mute = MuteState("")
        self._refresh_soon = QTimer(self)
        self._refresh_soon.setSingleShot(True)
        self._refresh_soon.setInterval(150)  # a catch-up's steps come many a second: one refresh for them
        self._refresh_soon.timeout.connect(self.refresh)
        self.notes.alerts_changed.connect(lambda _t: self._refresh_soon.start())
        self._mute_timer = QTimer(self)
        self._mute_timer.setInterval(MUTE_TICK_MS)
        self._mute_timer.timeout.connect(self.refresh_mute)
        self._mute_timer.start()
        self.action = QAction("&Alerts inbox", window)
        self.action.setShortcut(QKeySequence(INBOX_KEYS))
        self.action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        self.action.setIconText("Alerts")
        self.action.setToolTip(f"Alerts the rules raised, newest first ({INBOX_KEYS})")
        self.action.triggered.connect(lambda: self.open_inbox("", 0))
        window.addAction(self.action)
        window.menu_actions.all.append(self.action)
        self._add_to_window(window)
        self.tray_menu: TrayAlertMenu | None = None
        if tray is not None:
            self.tray_menu = TrayAlertMenu(tray.menu, tray.pause_action, self)
            self.tray_menu.inbox_requested.connect(lambda: self.open_inbox("", 0))
            self.tray_menu.alert_requested.connect(self.open_inbox)
            self.tray_menu.mark_all_requested.connect(self.mark_all_read)
            self.tray_menu.mute_off_requested.connect(self.dnd_off_requested.emit)
        self.refresh()

    def _add_to_window(self, window: MainWindow) -> None:
        """The View menu entry and an "Alerts" button in the menu bar's corner (beside Follow and Settings)."""
        for menu in window.menuBar().findChildren(QMenu):
            if menu.title() == "&View":
                menu.addSeparator()
                menu.addAction(self.action)
        self.button = QToolButton()
        self.button.setDefaultAction(self.action)
        self.button.setAccessibleName("Alerts inbox")
        self.button.setAutoRaise(True)
        self.button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        corner = window.menu_actions.corner
        layout = corner.layout() if corner is not None else None
        if corner is not None and layout is not None:
            layout.addWidget(self.button)
            corner.adjustSize()

    # -- tenants -------------------------------------------------------------------------------------------------
    def add_session(self, session: TenantSession) -> None:
        """Give the session the rules (before its monitor starts) and listen to what they raise."""
        session.alert_settings = self.settings.alerts
        session.alerts_evaluated.connect(self.notes.offer)
        self.sessions[session.name] = session
        self.book.add(session.name)
        self._refresh_soon.start()

    def remove(self, name: str) -> None:
        self.sessions.pop(name, None)
        self.notes.forget(name)
        self.book.remove(name)
        self._refresh_soon.start()

    def apply(self, settings: Settings) -> None:
        """New settings: rules (each running tenant re-evaluates with them), do-not-disturb, quiet hours."""
        rules_changed = settings.alerts != self._rules
        self.settings, self._rules = settings, settings.alerts.model_copy(deep=True)
        self.notes.set_settings(settings.notifications)
        for session in self.sessions.values():
            session.alert_settings = settings.alerts
            if rules_changed and session.alert_runner is not None:
                retune(session.alert_runner, settings.alerts, session.name)
        self.refresh_mute()

    async def close(self) -> None:
        self._mute_timer.stop()
        self._refresh_soon.stop()
        await self.notes.close()
        if self.inbox is not None:
            self.inbox.close()
        self.book.close()

    # -- state on the window and the tray --------------------------------------------------------------------------
    def refresh(self) -> None:
        self.unread = self.book.unread()
        self.action.setIconText(f"Alerts ({self.unread})" if self.unread else "Alerts")
        self.action.setText(f"&Alerts inbox ({self.unread} unread)" if self.unread else "&Alerts inbox")
        if self.tray_menu is not None:
            self.tray_menu.set_entries(self.book.entries(limit=5), self.unread)
        if self.inbox is not None and self.inbox.isVisible():
            self.inbox.reload()
        self.refresh_mute()
        self.unread_changed.emit(self.unread)

    def refresh_mute(self) -> None:
        """Do-not-disturb / quiet hours on the tray: badge, the menu line with its end, the tooltip."""
        self.mute = self.notes.quiet.state(time.time())
        text = self.mute.text()
        if self.tray is None or self.tray_menu is None:
            return
        self.tray_menu.set_mute(text, self.mute.reason == "do_not_disturb")
        lines = [text + " (alerts are still kept)"] if text else []
        if self.unread:
            lines.append(f"{self.unread} unread alert{'' if self.unread == 1 else 's'}")
        self.tray.set_badges(self.unread, self.mute.muted, lines)

    # -- the inbox -----------------------------------------------------------------------------------------------
    def open_inbox(self, profile: str = "", alert_id: int = 0) -> InboxWindow:
        """Show the inbox; with an alert (a notification or a tray entry was clicked) select it and mark it read."""
        if self.inbox is None:
            self.inbox = InboxWindow(self.book, self._events, self.window)
            self.inbox.events_requested.connect(self._show_events)
            self.inbox.event_requested.connect(self.window.select_event)
            self.inbox.read_changed.connect(self.refresh)
        inbox = self.inbox
        inbox.reload()
        inbox.show()
        inbox.raise_()
        inbox.activateWindow()
        entry = self.book.get(profile, alert_id) if profile and alert_id else None
        if entry is not None:
            if not entry.alert.read:
                self.book.mark_read([entry])
                self.refresh()
            inbox.select(profile, alert_id)
        return inbox

    def mark_all_read(self) -> None:
        if self.book.mark_all_read(self.book.entries(limit=10_000)):
            self.refresh()

    async def try_rule(self, rule: Rule, days: float = 7.0) -> str:
        """ "acme: would have fired 3 times in the last 7 days (…)", a line per tenant with a store."""
        hours = self.settings.alerts.working_hours
        lines = []
        for profile in self.book.profiles:
            trial = await asyncio.to_thread(
                _trial, self.paths.database_file(profile), rule, hours, profile, days
            )
            if trial is not None:
                lines.append(f"{profile}: {trial.sentence()}")
        return "\n".join(lines) or "No events stored yet to try the rule on."

    def _events(self, profile: str, seqs: list[int]) -> list[StoredEvent]:
        session = self.sessions.get(profile)
        pages = session.pages if session is not None else None
        if pages is None:
            return []
        return [ev for seq in seqs if (ev := pages.get(seq)) is not None]

    def _show_events(self, entry: InboxEntry, events: list[StoredEvent]) -> None:
        show_alert_events(self.window, entry, events)
