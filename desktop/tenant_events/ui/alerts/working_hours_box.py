"""Settings → Alert rules: working hours (from–to, on which days), which the "outside working hours" rules use.

Edits a copy of `AlertSettings.working_hours`; the time zone (a settings-file field) is kept as it is. No day
picked is named next to the fields and `collect` returns None, so the saved hours stay as they were.
"""

from __future__ import annotations

from PySide6.QtCore import QTime
from PySide6.QtWidgets import QCheckBox, QGroupBox, QHBoxLayout, QLabel, QTimeEdit, QVBoxLayout, QWidget

from tenant_events.alert_settings import WEEKDAYS, Weekday, WorkingHours
from tenant_events.ui.alerts.quiet_hours_box import DAY_LABELS, problem_label, say_problem


class WorkingHoursBox(QGroupBox):
    def __init__(self, hours: WorkingHours, parent: QWidget | None = None) -> None:
        super().__init__("&Working hours (rules about changes outside them use these)", parent)
        self.hours = hours
        self.start = QTimeEdit(QTime.fromString(hours.start, "HH:mm"))
        self.end = QTimeEdit(QTime.fromString(hours.end, "HH:mm"))
        for edit, name in ((self.start, "Working hours from"), (self.end, "Working hours to")):
            edit.setDisplayFormat("HH:mm")
            edit.setAccessibleName(name)
        self.days: dict[Weekday, QCheckBox] = {}
        times = QHBoxLayout()
        times.addWidget(QLabel("From"))
        times.addWidget(self.start)
        times.addWidget(QLabel("to"))
        times.addWidget(self.end)
        times.addWidget(QLabel("on"))
        for day, label in zip(WEEKDAYS, DAY_LABELS, strict=True):
            box = QCheckBox(label)
            box.setChecked(day in hours.days)
            box.toggled.connect(self.check)
            self.days[day] = box
            times.addWidget(box)
        times.addStretch(1)
        zone = hours.timezone or "this computer's time zone"
        self.note = QLabel(f"In {zone}; the same from and to: the whole day.")
        self.problem = problem_label()
        layout = QVBoxLayout(self)
        layout.addLayout(times)
        layout.addWidget(self.note)
        layout.addWidget(self.problem)

    def error(self) -> str:
        if not any(box.isChecked() for box in self.days.values()):
            return "Pick at least one working day."
        return ""

    def check(self) -> bool:
        return say_problem(self.problem, self.error())

    def collect(self) -> WorkingHours | None:
        """The hours as set (None while they cannot work)."""
        if not self.check():
            return None
        return self.hours.model_copy(
            update={
                "start": self.start.time().toString("HH:mm"),
                "end": self.end.time().toString("HH:mm"),
                "days": [day for day, box in self.days.items() if box.isChecked()],
            }
        )
