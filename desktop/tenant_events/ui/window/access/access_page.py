"""The Access view's widgets: which tenant and moment (or two moments), the filters, how complete the answer is,
and the answer itself — a tree of who held what at a moment, or a table of what changed between two.

It draws only; access_controller.py asks the history and fills it. Times are picked in local time, as the
custom time range is.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Final

from PySide6.QtCore import QDateTime, Qt
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDateTimeEdit,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QStackedWidget,
    QTableView,
    QToolButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from tenant_events.ui.window.access.access_models import ChangeCol, ChangesModel

FORMAT: Final = "yyyy-MM-dd HH:mm:ss"
AT, CHANGES = 0, 1  # the mode box's entries
ALL: Final = ""  # a filter box's "all" entry's data


def _moment_edit(name: str) -> QDateTimeEdit:
    edit = QDateTimeEdit()
    edit.setDisplayFormat(FORMAT)
    edit.setCalendarPopup(True)
    edit.setAccessibleName(f"{name} (local time)")
    edit.setToolTip(f"{name}, in local time")
    inner = edit.findChild(
        QLineEdit
    )  # the field's own text box takes the focus: a screen reader names it too
    if inner is not None:
        inner.setAccessibleName(f"{name} (local time)")
    return edit


def _now_button(tip: str) -> QToolButton:
    button = QToolButton()
    button.setText("Now")
    button.setCheckable(True)
    button.setChecked(True)
    button.setToolTip(tip)
    button.setAccessibleName(tip)
    return button


def _filter_box(name: str) -> QComboBox:
    box = QComboBox()
    box.setAccessibleName(name)
    # a set width: a long organization's name must not widen the window (the list shows it whole)
    box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    box.setMinimumContentsLength(16)
    box.setMaxVisibleItems(25)
    return box


class AccessPage(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tenant_box = _filter_box("Tenant")
        self.mode = QComboBox()
        self.mode.addItems(["Who had access at", "What changed after"])
        self.mode.setAccessibleName("What to show")
        self.at = _moment_edit("The moment")
        self.at_now = _now_button("Show access now, following new events")
        self.since = _moment_edit("From")
        self.until_label = QLabel("up to")
        self.until = _moment_edit("To")
        self.until_now = _now_button("Up to now, following new events")
        now = datetime.now(UTC)
        for edit, value in ((self.at, now), (self.since, now - timedelta(days=90)), (self.until, now)):
            edit.setDateTime(QDateTime.fromSecsSinceEpoch(int(value.timestamp())))
        self.role = _filter_box("Role")
        self.organization = _filter_box("Organization")
        self.group = _filter_box("Group")
        self.user = _filter_box("User")
        self.user.setEditable(True)
        self.user_edit = QLineEdit()
        self.user_edit.setPlaceholderText("All users")
        self.user_edit.setAccessibleName("User")
        self.user_edit.setClearButtonEnabled(True)
        for clear in self.user_edit.findChildren(QToolButton):
            clear.setAccessibleName("Clear the user filter")
        self.user.setLineEdit(self.user_edit)
        self.user.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.export_button = QPushButton("Export access review…")
        self.export_button.setAccessibleName("Export access review")
        self.export_button.setToolTip(
            "A printable report and a CSV of what is shown, for auditors (Ctrl+Shift+E)"
        )
        self.completeness = QLabel()
        self.completeness.setWordWrap(True)
        self.completeness.setTextFormat(Qt.TextFormat.RichText)
        self.completeness.setAccessibleName("How complete the answer is")
        self.counts = QLabel()
        self.counts.setAccessibleName("Counts")
        self.counts.setWordWrap(True)
        self.snapshot_model = QStandardItemModel(self)
        self.tree = QTreeView()
        self.tree.setModel(self.snapshot_model)
        self.tree.setAccessibleName("Who had access")
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.changes_model = ChangesModel()
        self.table = QTableView()
        self.table.setModel(self.changes_model)
        self.table.setAccessibleName("What changed")
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(
            self.table.fontMetrics().height() + 6
        )  # as the events
        self.unknown = QLabel()
        self.unknown.setWordWrap(True)
        self.unknown.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.unknown.setAccessibleName("Cannot be known")
        self.to_first = QPushButton("Start at the first stored event")
        self.to_first.setAccessibleName("Start at the first stored event")
        self.not_known = (
            QWidget()
        )  # a moment the history does not reach: said so, with the way to one it does
        box = QVBoxLayout(self.not_known)
        box.addStretch(1)
        box.addWidget(self.unknown)
        box.addWidget(self.to_first, 0, Qt.AlignmentFlag.AlignHCenter)
        box.addStretch(1)
        self.body = QStackedWidget()
        for widget in (self.tree, self.table, self.not_known):
            self.body.addWidget(widget)
        self._lay_out()
        self.since_chosen = (
            False  # the user picked the earlier moment of a diff (else it follows the history)
        )
        self.since.dateTimeChanged.connect(lambda _d: setattr(self, "since_chosen", True))
        self.mode.currentIndexChanged.connect(self._mode_changed)
        self.at_now.toggled.connect(lambda on: self.at.setEnabled(not on))
        self.until_now.toggled.connect(lambda on: self.until.setEnabled(not on))
        self._mode_changed(AT)
        self.at.setEnabled(False)
        self.until.setEnabled(False)

    def _lay_out(self) -> None:
        top = QHBoxLayout()
        for widget in (self.tenant_box, self.mode, self.at, self.at_now, self.since, self.until_label, self.until,
                       self.until_now):  # fmt: skip
            top.addWidget(widget)
        top.addStretch(1)
        top.addWidget(self.export_button)
        filters = QHBoxLayout()
        for label, box in (("&Role:", self.role), ("&Organization:", self.organization), ("&Group:", self.group),
                           ("&User:", self.user)):  # fmt: skip
            caption = QLabel(label)
            caption.setBuddy(box)
            filters.addWidget(caption)
            filters.addWidget(box)
        filters.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 4)
        layout.addLayout(top)
        layout.addLayout(filters)
        layout.addWidget(self.completeness)
        layout.addWidget(self.counts)  # (a line of its own: a long count never widens the window)
        layout.addWidget(self.body, 1)

    def _mode_changed(self, mode: int) -> None:
        at = mode == AT
        shown: tuple[QWidget, ...] = (self.at, self.at_now)
        hidden: tuple[QWidget, ...] = (self.since, self.until_label, self.until, self.until_now)
        for widget in shown:
            widget.setVisible(at)
        for widget in hidden:
            widget.setVisible(not at)

    def fit_columns(self) -> None:
        """The access text takes the room; times and ids fit their content."""
        header = self.tree.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(False)
        table = self.table.horizontalHeader()
        for col in (ChangeCol.WHEN, ChangeCol.CHANGE):
            table.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        for col in (ChangeCol.WHAT, ChangeCol.EVENT):
            table.setSectionResizeMode(col, QHeaderView.ResizeMode.Stretch)
        # who did it: room for a client and an address; the whole of it in the tooltip
        table.setSectionResizeMode(ChangeCol.WHO, QHeaderView.ResizeMode.Interactive)
        sample = "by Backoffice Script (backoffice) from 203.0.113.255"
        table.resizeSection(ChangeCol.WHO, self.table.fontMetrics().horizontalAdvance(sample) + 12)

    # -- what the user chose -------------------------------------------------------------------------------
    @property
    def showing_changes(self) -> bool:
        return self.mode.currentIndex() == CHANGES

    @staticmethod
    def _ms(edit: QDateTimeEdit) -> int:
        return edit.dateTime().toMSecsSinceEpoch()

    def at_ms(self) -> int | None:
        return None if self.at_now.isChecked() else self._ms(self.at)

    def since_ms(self) -> int:
        return self._ms(self.since)

    def until_ms(self) -> int | None:
        return None if self.until_now.isChecked() else self._ms(self.until)

    def start_at(self, first_ms: int, *, unless_chosen: bool = False) -> None:
        """The moment (or the earlier moment of a diff) at the first whole second the history answers for;
        `unless_chosen`: only the earlier moment, and only while the user has not picked one."""
        if unless_chosen and self.since_chosen:
            return
        moment = QDateTime.fromMSecsSinceEpoch(-(-first_ms // 1000) * 1000)
        if unless_chosen:
            if moment > self.since.dateTime():
                self.since.blockSignals(True)
                self.since.setDateTime(moment)
                self.since.blockSignals(False)
            return
        edit = self.since if self.showing_changes else self.at
        (self.until_now if self.showing_changes else self.at_now).setChecked(self.showing_changes)
        edit.setDateTime(moment)

    def show_now(self, newest_ms: int | None) -> None:
        """A field set to Now shows the moment it stands for: the newest stored event."""
        if newest_ms is None:
            return
        for button, edit in ((self.at_now, self.at), (self.until_now, self.until)):
            if button.isChecked():
                edit.blockSignals(True)
                edit.setDateTime(QDateTime.fromMSecsSinceEpoch(newest_ms))
                edit.blockSignals(False)

    def follows_now(self) -> bool:
        return self.until_now.isChecked() if self.showing_changes else self.at_now.isChecked()
