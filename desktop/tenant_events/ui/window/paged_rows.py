"""A table model that grows a page at a time as its view scrolls, the pages read on a worker thread: the
timeline pane's and the All tenants table's. `fetchMore` only asks (`more_wanted`); the controller reads the
next page off the UI thread and hands it to `append`, so scrolling never reads a store on the UI thread."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Signal

Index = QModelIndex | QPersistentModelIndex
R = TypeVar("R")


class PagedRowsModel(QAbstractTableModel, Generic[R]):
    """Rows newest first; `done` once the last page is in, `loading` while a page is being read."""

    more_wanted = Signal()
    COLUMNS = 0  # a subclass says how many columns it shows

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.rows: list[R] = []
        self.done = True
        self.loading = False

    def reset(self, rows: list[R], done: bool) -> None:
        self.beginResetModel()
        self.rows, self.done, self.loading = list(rows), done, False
        self.endResetModel()

    def append(self, rows: list[R], done: bool) -> None:
        self.loading, self.done = False, done
        if rows:
            self.beginInsertRows(QModelIndex(), len(self.rows), len(self.rows) + len(rows) - 1)
            self.rows += rows
            self.endInsertRows()

    def row_at(self, row: int) -> R | None:
        return self.rows[row] if 0 <= row < len(self.rows) else None

    def canFetchMore(self, parent: Index = QModelIndex()) -> bool:  # noqa: B008 - Qt's signature
        return not parent.isValid() and not self.done and not self.loading

    def fetchMore(self, parent: Index = QModelIndex()) -> None:  # noqa: B008
        if self.canFetchMore(parent):
            self.loading = True
            self.more_wanted.emit()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else self.COLUMNS
