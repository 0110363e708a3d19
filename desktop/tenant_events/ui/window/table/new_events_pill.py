"""The "↑ N new events" pill: rows that arrived unseen above the view, and the way to them (N).

It floats in the table's header band, never over the first row (the newest event is the one to read) and never
over a column's title: it takes the widest stretch of the header that no title covers, so "Summary" or "Event
ID" stays readable whatever the widths, with the detail pane open or not. It takes no keyboard focus: a click
on it must leave the focus where it was (a focused pill that hides passes the focus on to the table, which then
picks its first row by itself).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHeaderView, QPushButton, QTableView

TITLE_AIR = 8  # px kept free on each side of a column title


class NewEventsPill(QPushButton):
    """The pill over one table; `noun` is what its rows are (the alerts inbox has one too: "↑ 2 new alerts")."""

    def __init__(
        self,
        table: QTableView,
        noun: str = "event",
        tip: str = "Jump to the newest events and follow them (N)",
    ) -> None:
        super().__init__(table)
        self.table = table
        self.noun = noun
        self.setObjectName("newEventsPill")
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setAccessibleName(f"Jump to the newest {noun}s")
        self.setToolTip(tip)
        self.setStyleSheet(
            "#newEventsPill { background: palette(highlight); color: palette(highlighted-text);"
            " border: none; border-radius: 10px; padding: 1px 14px; font-weight: bold; }"
        )
        self.shown = 0
        header = table.horizontalHeader()
        header.sectionResized.connect(lambda *_a: self.place())
        header.sectionMoved.connect(lambda *_a: self.place())
        header.geometriesChanged.connect(self.place)
        self.hide()

    def show_count(self, n: int) -> None:
        if n == self.shown:  # called on every scroll step: only a change costs anything
            return
        self.shown = n
        if n > 0:
            self.setText(f"↑ {n:,} new {self.noun}{'' if n == 1 else 's'}")
            self.adjustSize()
            self.place()
            self.raise_()
        self.setVisible(n > 0)

    def place(self) -> None:
        """In the header band, centred in the widest stretch no column title covers (see the module docstring)."""
        if not self.shown:
            return
        viewport = self.table.viewport().geometry()  # in the table's coordinates: below the header
        band = viewport.y()  # the header's height (0 with no header)
        if band >= 12:
            self.setMaximumHeight(band)
            self.resize(self.width(), min(self.sizeHint().height(), band))
        start, end = widest_free(self.table.horizontalHeader(), viewport.width())
        x = start + max(0, (end - start - self.width()) // 2)
        x = min(x, max(0, viewport.width() - self.width()))
        self.move(viewport.x() + x, max(0, (band - self.height()) // 2))


def title_spans(header: QHeaderView) -> list[tuple[int, int]]:
    """Where each visible column title's text is, in the header's x (sorted)."""
    metrics = header.fontMetrics()
    model = header.model()
    centred = bool(header.defaultAlignment() & Qt.AlignmentFlag.AlignHCenter)
    spans = []
    for visual in range(header.count()):
        logical = header.logicalIndex(visual)
        if header.isSectionHidden(logical):
            continue
        left, size = header.sectionViewportPosition(logical), header.sectionSize(logical)
        text = str(model.headerData(logical, header.orientation()) or "") if model is not None else ""
        width = min(size, metrics.horizontalAdvance(text) + 2 * TITLE_AIR)
        start = left + (size - width) // 2 if centred else left
        spans.append((start, start + width))
    return sorted(spans)


def widest_free(header: QHeaderView, width: int) -> tuple[int, int]:
    """The widest stretch of [0, width) that no column title covers."""
    best, at = (0, 0), 0
    for start, end in [*title_spans(header), (width, width)]:
        if start - at > best[1] - best[0]:
            best = (at, start)
        at = max(at, end)
    return best
