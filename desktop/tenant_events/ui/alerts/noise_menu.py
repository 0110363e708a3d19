"""The inbox's "Quiet this…" menu for the selected alert, and the silence dialog it opens for "until…".

    Quiet this ▾   Silence this rule        ▸ for 1 hour · for 24 hours · until…
                   Silence this group       ▸ for 1 hour · for 24 hours · until…     (a grouped rule's alert)
                   Never for client HR Import…                                        (an exception of the rule)

Only widgets and signals: AppAlerts keeps the silence (settings/silences_file.py) and writes the exception into
the settings (alerts/exceptions.py).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import partial
from typing import Final

from PySide6.QtCore import QDateTime, Signal
from PySide6.QtWidgets import (
    QDateTimeEdit,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QToolButton,
    QWidget,
)

from tenant_events.ui.alerts.alert_book import InboxEntry
from tenant_events.values.silences import GROUP_MARK

DURATIONS: Final = (("for 1 hour", 3600.0), ("for 24 hours", 86_400.0))
MAX_S: Final = 366 * 86_400.0


def _qt(moment: datetime) -> QDateTime:
    return QDateTime.fromSecsSinceEpoch(int(moment.timestamp()))


class SilenceDialog(QDialog):
    """Until when, and why: the matchers are shown, not edited (they come from the alert)."""

    def __init__(self, what: str, parent: QWidget | None = None, now: datetime | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Silence alerts — Tenant Events")
        start = now or datetime.now()
        self.what = QLabel(what)
        self.what.setWordWrap(True)
        self.until = QDateTimeEdit(_qt(start + timedelta(hours=4)))
        self.until.setCalendarPopup(True)
        self.until.setDisplayFormat("yyyy-MM-dd HH:mm")
        self.until.setMinimumDateTime(_qt(start + timedelta(minutes=1)))
        self.until.setMaximumDateTime(_qt(start + timedelta(seconds=MAX_S)))
        self.until.setAccessibleName("Silenced until")
        self.comment = QLineEdit()
        self.comment.setMaxLength(500)
        self.comment.setPlaceholderText("why, for the team (e.g. onboarding Acme)")
        self.comment.setAccessibleName("Comment")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.ok = buttons.addButton("&Silence", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form = QFormLayout(self)
        form.addRow("Alerts", self.what)
        form.addRow("&Until", self.until)
        form.addRow("&Comment", self.comment)
        form.addRow(buttons)
        self.setMinimumWidth(self.fontMetrics().averageCharWidth() * 60)  # its title and the hint, whole

    def seconds(self, now: datetime | None = None) -> float:
        """How long from now the silence lasts."""
        end = self.until.dateTime().toSecsSinceEpoch()
        return end - (now or datetime.now()).timestamp()


class NoiseMenu(QToolButton):
    """The "Quiet this" button and its menu, for the alert the inbox shows."""

    silence_requested = Signal(
        object, str, float
    )  # InboxEntry, "rule" | "group", seconds (0: ask until when)
    exception_requested = Signal(object)  # InboxEntry: never fire its rule for its group

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setText("&Quiet this")
        self.setAccessibleName("Silence or except this alert")
        self.setToolTip("Silence this rule or group for a while, or never fire the rule for this group")
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.menu_ = QMenu(self)
        self.setMenu(self.menu_)
        self.entry: InboxEntry | None = None
        self.show_entry(None)

    def show_entry(self, entry: InboxEntry | None) -> None:
        self.entry = entry
        self.menu_.clear()
        self.setEnabled(entry is not None)
        if entry is None:
            return
        group = entry.alert.rule_name.partition(GROUP_MARK)[2] if entry.alert.group_key else ""
        scopes = [("rule", "Silence this &rule")] + ([("group", "Silence this &group")] if group else [])
        for scope, label in scopes:
            sub = self.menu_.addMenu(label)
            for text, seconds in DURATIONS:
                sub.addAction(text, partial(self.silence_requested.emit, entry, scope, seconds))
            sub.addAction("until…", partial(self.silence_requested.emit, entry, scope, 0.0))
        if group:
            self.menu_.addSeparator()
            self.menu_.addAction(f"&Never for {group}…", partial(self.exception_requested.emit, entry))
