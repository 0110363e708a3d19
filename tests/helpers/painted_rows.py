"""What a table view paints behind a row: its background colour, read from the pixels the view draws."""

from __future__ import annotations

from PySide6.QtGui import QColor
from PySide6.QtWidgets import QTableView


def row_background(view: QTableView, row: int, column: int = 0) -> QColor:
    """The colour at the right end of `row`'s cell in `column` (left-aligned text never reaches it), the row
    scrolled into view first and not selected."""
    index = view.model().index(row, column)
    view.scrollTo(index)
    rect = view.visualRect(index)
    assert rect.isValid() and view.viewport().rect().contains(rect.center()), f"row {row} is not in view"
    return view.viewport().grab().toImage().pixelColor(rect.right() - 2, rect.center().y())
