"""Settings ▸ Silences: the silences that hold alerts now (and those ended in the last week), who made each and
why, and "Lift" to end one at once — a team's silence for the whole team (tenant/silences.py, the one path of
every front end). The list is the installation's silences file (settings/silences_file.py), read again each time
the page is shown or a silence is lifted; made from the inbox's "Quiet this" menu or with `tenant-events silences
add`.
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime
from typing import Final

from PySide6.QtCore import Qt
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from tenant_events.errors import UserFixableError
from tenant_events.tenant.silences import Silences
from tenant_events.ui.task_set import TaskSet
from tenant_events.values.silences import Silence

HEADERS: Final = ("Silences", "Until", "By", "Comment")
EMPTY: Final = "No silences. Silence a rule or a group from an alert's “Quiet this” menu in the inbox."


class SilencesPage(QWidget):
    def __init__(self, silences: Silences, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.silences = silences
        self._tasks = TaskSet()
        self.listed: list[Silence] = []
        self.note = QLabel(EMPTY)
        self.note.setWordWrap(True)
        self.table = QTableWidget(0, len(HEADERS))
        self.table.setHorizontalHeaderLabels(list(HEADERS))
        self.table.setAccessibleName("Silences")
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.lift_button = QPushButton("&Lift")
        self.lift_button.setToolTip("End the selected silence now: its alerts notify and deliver again")
        self.lift_button.clicked.connect(self.lift)
        self.lift_button.setAutoDefault(False)
        self.problem = QLabel()
        self.table.itemSelectionChanged.connect(self._selected)
        row = QHBoxLayout()
        row.addWidget(self.lift_button)
        row.addWidget(self.problem, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.note)
        layout.addWidget(self.table, 1)
        layout.addLayout(row)
        self.reload()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.reload()

    def reload(self) -> None:
        now = time.time()
        self.listed = sorted(self.silences.book.all(), key=lambda s: (not s.active(now), -s.ends_at))
        self.table.setRowCount(len(self.listed))
        for r, s in enumerate(self.listed):
            ended = "ended " if s.ends_at <= now else ""
            cells = (
                s.matchers_text(),
                ended + datetime.fromtimestamp(s.ends_at).strftime("%Y-%m-%d %H:%M"),
                s.author,
                s.comment,
            )
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if not s.active(now):  # an ended silence is listed greyed
                    item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled)
                self.table.setItem(r, c, item)
        self.note.setVisible(not self.listed)
        self._selected()

    def _selected(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        chosen = self.listed[rows[0].row()] if rows else None
        self.lift_button.setEnabled(chosen is not None and chosen.active(time.time()))

    def lift(self) -> asyncio.Task[None] | None:
        """End the selected silence (the task that does it: a team's asks the hub first)."""
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return None
        self.lift_button.setEnabled(False)
        return self._tasks.spawn(self._lift(self.listed[rows[0].row()].id))

    async def _lift(self, silence_id: str) -> None:
        try:
            await self.silences.lift(silence_id)
            self.problem.setText("")
        except (UserFixableError, OSError) as exc:
            self.problem.setText(str(exc))
        self.reload()
