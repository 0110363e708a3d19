"""The timeline pane: back and forward, the object's name and current state, its events newest first.

A widget only: the controller (timeline_controller.py) reads timelines on a worker and fills it. Double-click or
Enter on an entry opens that event in the table and the detail pane; a name in an entry opens its own timeline.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QFont, QIcon, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QStyle,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from tenant_events.entities.sentences import Mention
from tenant_events.entities.timeline_pages import TimelineScreen
from tenant_events.ui.window.timeline.sentence_delegate import SentenceDelegate
from tenant_events.ui.window.timeline.timeline_model import TimelineCol, TimelineModel

NARROW_PX = 640  # below this the Type column is hidden
STATE_LINES = 7  # the state box's height in lines; longer states scroll


class TimelinePane(QWidget):
    back_requested = Signal()
    forward_requested = Signal()
    close_requested = Signal()
    entry_opened = Signal(str, int)  # tenant, seq
    mention_clicked = Signal(str, object)  # tenant, Mention

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Timeline")
        style = self.style()
        self.back_button = self._tool(
            style.standardIcon(QStyle.StandardPixmap.SP_ArrowBack), "Back (Alt+Left)"
        )
        self.forward_button = self._tool(
            style.standardIcon(QStyle.StandardPixmap.SP_ArrowForward), "Forward (Alt+Right)"
        )
        self.close_button = self._tool(
            style.standardIcon(QStyle.StandardPixmap.SP_TitleBarCloseButton), "Close the timeline"
        )
        self.back_button.clicked.connect(self.back_requested)
        self.forward_button.clicked.connect(self.forward_requested)
        self.close_button.clicked.connect(self.close_requested)
        self.title = QLabel()
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        self.title.setMinimumWidth(10)
        self.title.setWordWrap(True)  # a long name takes a second line rather than being cut
        bold = QFont(self.title.font())
        bold.setBold(True)
        self.title.setFont(bold)
        self.state = QPlainTextEdit()
        self.state.setReadOnly(True)
        self.state.setAccessibleName("Current state")
        self.state.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.state.setMaximumHeight(self.fontMetrics().lineSpacing() * STATE_LINES + 12)
        self.model = TimelineModel(self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setAccessibleName("Timeline events")
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        header = self.table.horizontalHeader()
        for col in (TimelineCol.TIME, TimelineCol.TENANT, TimelineCol.TYPE):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(TimelineCol.WHAT, QHeaderView.ResizeMode.Stretch)
        self.delegate = SentenceDelegate(self.table)
        self.table.setItemDelegateForColumn(TimelineCol.WHAT, self.delegate)
        self.delegate.mention_clicked.connect(self._mention)
        self.table.activated.connect(self._open)
        self.table.doubleClicked.connect(self._open)
        self.status = QLabel()
        self.status.setAccessibleName("Timeline status")
        top = QHBoxLayout()
        top.addWidget(self.back_button)
        top.addWidget(self.forward_button)
        top.addWidget(self.title, 1)
        top.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.state)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.status)
        self.set_history(False, False)

    def _tool(self, icon: QIcon, tip: str) -> QToolButton:
        button = QToolButton()
        button.setIcon(icon)
        button.setToolTip(tip)
        button.setAccessibleName(tip.split(" (")[0])
        button.setAutoRaise(True)
        return button

    def resizeEvent(self, event: QResizeEvent) -> None:
        """A narrow pane keeps its width for the sentences: the type steps aside (the sentence says it)."""
        super().resizeEvent(event)
        self.table.setColumnHidden(TimelineCol.TYPE, event.size().width() < NARROW_PX)

    def set_history(self, can_back: bool, can_forward: bool) -> None:
        self.back_button.setEnabled(can_back)
        self.forward_button.setEnabled(can_forward)

    def show_loading(self, what: str) -> None:
        self.title.setText(f"Timeline of {what.replace('email:', 'user ', 1)}")
        self.state.setPlainText("")
        self.model.reset([], True)
        self.status.setText("Reading…")

    def show_screen(self, screen: TimelineScreen) -> None:
        kind = "user" if screen.spec.kind == "email" else screen.spec.kind  # a user followed by email
        self.title.setText(f"Timeline of {kind} {screen.label}")
        self.title.setToolTip(f"{screen.spec}")
        self.show_state(screen.state)
        self.model.reset(screen.rows, screen.done)
        self.show_count()

    def show_state(self, lines: list[str]) -> None:
        """The object's state (read after its entries); empty while it is being read."""
        self.state.setPlainText("\n".join(lines) if lines else "Reading its state…")

    def show_count(self) -> None:
        n = self.model.rowCount()
        if n == 0:
            self.status.setText("No stored event names it.")
        elif self.model.done:
            self.status.setText(
                f"{n:,} event{'' if n == 1 else 's'}, newest first; double-click one to open it"
            )
        else:
            self.status.setText(f"{n:,} newest events shown; scroll for older ones")

    def _open(self, index: QModelIndex) -> None:
        row = self.model.row_at(index.row())
        if row is not None:
            self.entry_opened.emit(row.tenant, row.event.seq)

    def _mention(self, index: QModelIndex, mention: Mention) -> None:
        row = self.model.row_at(index.row())
        if row is not None:
            self.mention_clicked.emit(row.tenant, mention)
