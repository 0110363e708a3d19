"""Pick a custom time range with two date-time fields ("Custom…" in the time menu)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from PySide6.QtCore import QDateTime, Signal
from PySide6.QtWidgets import (
    QDateTimeEdit,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from tenant_events.ui.look.captions import whole_captions

FORMAT = "yyyy-MM-dd HH:mm:ss"


class TimeRangeDialog(QDialog):
    range_chosen = Signal(object, object)  # since, until (aware datetimes)

    def __init__(
        self, since: datetime | None = None, until: datetime | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Custom time range")
        self.setAccessibleName("Custom time range")
        now = datetime.now(UTC)
        until = until or now
        since = since or until - timedelta(hours=1)
        self.since = self._field(since, "From")
        self.until = self._field(until, "To")
        self.error = QLabel()
        self.error.setAccessibleName("Time range problem")
        self.error.setStyleSheet("color: palette(bright-text)")
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self._accept)
        self.buttons.rejected.connect(self.reject)
        form = QFormLayout()
        form.addRow("&From (local time):", self.since)
        form.addRow("&To (local time):", self.until)
        layout = QVBoxLayout(self)
        layout.addLayout(whole_captions(form))
        layout.addWidget(self.error)
        layout.addWidget(self.buttons)
        self.since.dateTimeChanged.connect(lambda _d: self._check())
        self.until.dateTimeChanged.connect(lambda _d: self._check())
        self._check()

    @staticmethod
    def _field(value: datetime, name: str) -> QDateTimeEdit:
        edit = QDateTimeEdit(QDateTime.fromSecsSinceEpoch(int(value.timestamp())))
        edit.setDisplayFormat(FORMAT)
        edit.setCalendarPopup(True)
        edit.setAccessibleName(f"{name} (local time)")
        return edit

    def chosen(self) -> tuple[datetime, datetime]:
        a = datetime.fromtimestamp(self.since.dateTime().toSecsSinceEpoch(), UTC)
        b = datetime.fromtimestamp(self.until.dateTime().toSecsSinceEpoch(), UTC)
        return a, b

    def _check(self) -> bool:
        a, b = self.chosen()
        ok = b > a
        self.error.setText("" if ok else "“To” must be later than “From”: move one of them.")
        ok_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        ok_button.setEnabled(ok)
        return ok

    def _accept(self) -> None:
        if self._check():
            self.range_chosen.emit(*self.chosen())
            self.accept()
