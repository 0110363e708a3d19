"""The Access view's two models: a snapshot as a tree (organizations, groups, users; under each its grants as the
timeline's state says them) and a diff as a table (one change a row, with the event that did it and who did it).

Each row that stands for a grant or change carries the seq of its event (SEQ_ROLE), so a double-click opens that
event in the table. Times are local in the cells and UTC in the tooltips, as in the event table.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import IntEnum
from typing import Any, Final

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QFont, QStandardItem, QStandardItemModel

from tenant_events.access.records import Change, ChangeKind, Diff, Grant, Snapshot
from tenant_events.access.sections import sections
from tenant_events.access.words import change_line, who_line
from tenant_events.alerts.access_state import admin_like
from tenant_events.entities.state_text import title
from tenant_events.server_text import shown

SEQ_ROLE: Final = int(Qt.ItemDataRole.UserRole) + 1  # the event that began a grant, or did a change
_HEADINGS: Final = {"organization": "Organizations", "group": "Groups", "user": "Users"}
Index = QModelIndex | QPersistentModelIndex


def local(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).astimezone().strftime("%Y-%m-%d %H:%M:%S")


def utc(ms: int) -> str:
    return (
        datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        + " (UTC)"
    )


def _item(text: str, tip: str | None = None) -> QStandardItem:
    item = QStandardItem(shown(text, None))  # names come from the tenant's events
    item.setEditable(False)
    if tip:
        item.setToolTip(shown(tip, None))
    return item


def _since(ms: int | None) -> QStandardItem:
    if ms is None:
        return _item(
            "before the history",
            "It began before the first stored event: its removal is stored, not its grant",
        )
    return _item(local(ms), utc(ms))


def _grant_row(said: str, grant: Grant) -> list[QStandardItem]:
    cells = [
        _item(said, "\n".join(f"{e.kind} {e.label}: {e.id}" for e in grant.entities)),
        _since(grant.since_ms),
        _item(grant.event_id or "", "The event that began it: double-click to open it in the table"),
    ]
    if grant.role is not None and admin_like(grant.role.name):
        bold = QFont()
        bold.setBold(True)
        cells[0].setFont(bold)
    for cell in cells:
        cell.setData(grant.seq, SEQ_ROLE)
    return cells


def snapshot_model(snapshot: Snapshot, model: QStandardItemModel) -> None:
    """Fill `model` with the snapshot: a heading per kind, an entity per heading, its grants under it."""
    model.clear()
    model.setHorizontalHeaderLabels(["Access", "Since", "Event"])
    for kind, found in sections(snapshot.grants).items():
        heading = _item(f"{_HEADINGS[kind]} ({len(found):,})")
        model.appendRow([heading, _item(""), _item("")])
        for section in found:
            entity = _item(title(section.entity), section.entity.id)
            heading.appendRow([entity, _item(""), _item("")])
            for said, grant in section.lines:
                entity.appendRow(_grant_row(said, grant))


class ChangeCol(IntEnum):
    WHEN = 0
    CHANGE = 1
    WHAT = 2
    EVENT = 3
    WHO = 4


_HEADERS: Final = {
    ChangeCol.WHEN: "When",
    ChangeCol.CHANGE: "Change",
    ChangeCol.WHAT: "What changed",
    ChangeCol.EVENT: "The event that did it",
    ChangeCol.WHO: "Who",
}
_BEGAN: Final = (ChangeKind.GRANTED, ChangeKind.JOINED, ChangeKind.CONNECTION_ADDED)


class ChangesModel(QAbstractTableModel):
    """A diff's changes, oldest first; reset whole when a new diff arrives."""

    def __init__(self) -> None:
        super().__init__()
        self.changes: list[Change] = []

    def show(self, diff: Diff | None) -> None:
        self.beginResetModel()
        self.changes = list(diff.changes) if diff is not None else []
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self.changes)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(ChangeCol)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return _HEADERS.get(ChangeCol(section)) if 0 <= section < len(ChangeCol) else None
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.changes):
            return None
        change, col = self.changes[index.row()], ChangeCol(index.column())
        if role == Qt.ItemDataRole.DisplayRole:
            return shown(self._text(change, col), None)
        if role == Qt.ItemDataRole.ToolTipRole:
            if col == ChangeCol.WHEN:
                return utc(change.at_ms)
            if col == ChangeCol.EVENT and change.event_id:
                return f"{change.event_type} {change.event_id}: double-click to open it in the table"
            if col == ChangeCol.WHO and change.event_id:
                return who_line(change)
            return shown(self._text(change, col), None)
        if role == SEQ_ROLE:
            return change.seq
        if role == Qt.ItemDataRole.FontRole and col == ChangeCol.CHANGE:
            font = QFont()
            font.setBold(change.grant.role is not None and admin_like(change.grant.role.name))
            return font
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return shown(f"{local(change.at_ms)}, {change.kind.value}, {change_line(change)}", None)
        return None

    @staticmethod
    def _text(change: Change, col: ChangeCol) -> str:
        if col == ChangeCol.WHEN:
            return local(change.at_ms)
        if col == ChangeCol.CHANGE:
            return ("+ " if change.kind in _BEGAN else "− ") + change.kind.value
        if col == ChangeCol.WHAT:
            return change_line(change)
        if col == ChangeCol.EVENT:
            return change.sentence.text if change.sentence is not None else "(the event is no longer stored)"
        if change.event_id is None:
            return ""
        return who_line(change) if change.client or change.client_id or change.ip else "—"
