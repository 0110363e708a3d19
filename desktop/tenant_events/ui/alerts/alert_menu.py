"""The tray menu's alert part: the do-not-disturb line ("Do not disturb until 14:30") and the newest alerts.

    Do not disturb until 14:30          (only while muted; picking it turns do-not-disturb off)
    Alerts — 2 unread ▸  ● ▲ Mass deletion × 2 · demo · 14:32
                         ○ ◆ Organization connection changed · demo · 14:20
                         …(the five that fired last, the latest first)  ─  Open the alerts inbox…  Mark all read

Inserted into the tray's menu above its first entry after "Open"; only emits signals, like ui/tray/tray_icon.py.
"""

from __future__ import annotations

from functools import partial

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from tenant_events.alerts.presentation import title
from tenant_events.ui.alerts.alert_book import InboxEntry
from tenant_events.ui.alerts.inbox_model import local_stamp

TRAY_LIST = 5
_MARK = {"critical": "▲", "warning": "◆", "info": "●"}


class TrayAlertMenu(QObject):
    inbox_requested = Signal()
    alert_requested = Signal(str, int)  # profile, alert id
    mark_all_requested = Signal()
    mute_off_requested = Signal()

    def __init__(self, menu: QMenu, before: QAction, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.mute_action = QAction("", menu)
        self.mute_action.setToolTip("Turn do-not-disturb off")
        self.mute_action.triggered.connect(self.mute_off_requested.emit)
        self.mute_action.setVisible(False)
        menu.insertAction(before, self.mute_action)
        self.menu = QMenu("Alerts", menu)
        self.menu.setAccessibleName("Recent alerts")
        menu.insertMenu(before, self.menu)
        self.entries: list[InboxEntry] = []
        self._listed: list[QAction] = []  # the entries' actions, made anew on each change
        self.menu.addSeparator()  # below the entries: made once (each action made and dropped kept a little)
        self.open_action = self.menu.addAction("Open the alerts inbox…", self.inbox_requested.emit)
        self.mark_action = self.menu.addAction("Mark all read", self.mark_all_requested.emit)
        self.set_entries([], 0)

    def set_mute(self, text: str, can_turn_off: bool) -> None:
        """`text`: "Do not disturb until 14:30" / "Quiet hours until 07:00", or "" when nothing is held."""
        self.mute_action.setText(f"{text} — turn off" if text and can_turn_off else text)
        self.mute_action.setEnabled(can_turn_off)
        self.mute_action.setVisible(bool(text))

    def _open(self, profile: str, alert_id: int) -> None:
        self.alert_requested.emit(profile, alert_id)

    def set_entries(self, entries: list[InboxEntry], unread: int) -> None:
        self.entries = entries[:TRAY_LIST]
        self.menu.setTitle(f"Alerts — {unread} unread" if unread else "Alerts")
        for action in self._listed:
            self.menu.removeAction(action)
            action.deleteLater()
        self._listed = []
        first = self.menu.actions()[0]  # the separator above the fixed entries
        for e in self.entries:
            a = e.alert
            dot = "○" if a.read else "●"
            text = f"{dot} {_MARK[a.severity]} {title(a)} · {e.profile} · {local_stamp(a.fired_at or a.raised_at)}"
            action = QAction(text, self.menu)
            action.triggered.connect(partial(self._open, e.profile, a.id))
            self._listed.append(action)
        if not self.entries:
            action = QAction("No alerts yet", self.menu)
            action.setEnabled(False)
            self._listed.append(action)
        self.menu.insertActions(first, self._listed)
        self.mark_action.setEnabled(unread > 0)
