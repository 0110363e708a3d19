"""Settings → Notifications: quiet hours (from–to, on which days) and whether critical alerts get through.

Edits a `NotificationSettings` copy. A choice that cannot work (from = to, no day picked) is named next to the
fields and `collect` returns None, so the dialog keeps it open and the saved settings stay as they were.
"""

from __future__ import annotations

from PySide6.QtCore import QTime
from PySide6.QtWidgets import (
    QCheckBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QTimeEdit,
    QVBoxLayout,
    QWidget,
)

from tenant_events.alert_settings import WEEKDAYS, Weekday
from tenant_events.settings import NotificationSettings
from tenant_events.ui.look.theme import error_color

DAY_LABELS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def problem_label() -> QLabel:
    """The line under a box of fields that says what cannot work (hidden while nothing is wrong)."""
    label = QLabel()
    label.setStyleSheet(f"color: {error_color().name()}")
    label.setVisible(False)
    return label


def say_problem(label: QLabel, text: str) -> bool:
    """Show `text` (or hide the line when it is empty); True when there is nothing wrong."""
    label.setText(text)
    label.setVisible(bool(text))
    return not text


class QuietHoursBox(QGroupBox):
    def __init__(self, n: NotificationSettings, parent: QWidget | None = None) -> None:
        super().__init__("&Quiet hours: hold notifications (alerts are still kept)", parent)
        self.setCheckable(True)
        self.setChecked(n.quiet_hours is not None)
        start, end = n.quiet_hours or ("22:00", "07:00")
        self.start = QTimeEdit(QTime.fromString(start, "HH:mm"))
        self.end = QTimeEdit(QTime.fromString(end, "HH:mm"))
        for edit, name in ((self.start, "Quiet hours from"), (self.end, "Quiet hours to")):
            edit.setDisplayFormat("HH:mm")
            edit.setAccessibleName(name)
            edit.timeChanged.connect(self.check)
        self.days: dict[Weekday, QCheckBox] = {}
        days_row = QHBoxLayout()
        days_row.addWidget(QLabel("on"))
        for day, label in zip(WEEKDAYS, DAY_LABELS, strict=True):
            box = QCheckBox(label)
            box.setChecked(day in n.quiet_days)
            box.toggled.connect(self.check)
            self.days[day] = box
            days_row.addWidget(box)
        days_row.addStretch(1)
        times = QHBoxLayout()
        times.addWidget(QLabel("From"))
        times.addWidget(self.start)
        times.addWidget(QLabel("to"))
        times.addWidget(self.end)
        times.addWidget(QLabel("(a range past midnight belongs to the day it starts)"))
        times.addStretch(1)
        self.problem = problem_label()
        self.problem.setObjectName("quiet_hours_problem")
        self.critical = QCheckBox("Let &critical alerts through do not disturb and quiet hours")
        self.critical.setChecked(n.critical_passes_dnd)
        layout = QVBoxLayout(self)
        layout.addLayout(times)
        layout.addLayout(days_row)
        layout.addWidget(self.problem)
        self.toggled.connect(self.check)

    def error(self) -> str:
        """Why the quiet hours as set cannot work ("" when they can, or are off)."""
        if not self.isChecked():
            return ""
        if self.start.time() == self.end.time():
            return "“From” and “to” are the same time: pick when the quiet hours end."
        if not any(box.isChecked() for box in self.days.values()):
            return "Pick at least one day for the quiet hours, or turn them off."
        return ""

    def check(self) -> bool:
        return say_problem(self.problem, self.error())

    def collect(self, n: NotificationSettings) -> bool:
        """Write the choice into `n`; False (nothing written) when it cannot work."""
        if not self.check():
            return False
        n.critical_passes_dnd = self.critical.isChecked()
        if not self.isChecked():
            n.quiet_hours = None
            return True
        n.quiet_hours = (self.start.time().toString("HH:mm"), self.end.time().toString("HH:mm"))
        n.quiet_days = [day for day, box in self.days.items() if box.isChecked()]
        return True
