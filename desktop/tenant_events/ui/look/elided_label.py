"""A one-line label that never makes its row taller or wider than the room it is given: a text longer than that
is cut with "…" where it is drawn, and the whole of it is the label's tooltip and what `text()` answers.

A wrapping label beside a line edit grew the filter bar to four lines for a long query problem and squeezed
the fields beside it until the last one was clipped; this one shrinks instead (down to MIN_WIDTH).
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

MIN_WIDTH = 80


class ElidedLabel(QLabel):
    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setWordWrap(False)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)

    def setText(self, text: str) -> None:
        super().setText(text)
        self.setToolTip(text)
        self.updateGeometry()

    def minimumSizeHint(self) -> QSize:
        return QSize(min(MIN_WIDTH, super().sizeHint().width()), super().minimumSizeHint().height())

    @property
    def elided(self) -> bool:
        """Whether the text is cut where it is drawn now."""
        return self.fontMetrics().horizontalAdvance(self.text()) > self.contentsRect().width()

    def paintEvent(self, _event: QPaintEvent) -> None:
        painter = QPainter(self)
        rect = self.contentsRect()
        shown = self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideRight, rect.width())
        painter.setPen(self.palette().color(self.foregroundRole()))
        painter.drawText(rect, int(self.alignment() | Qt.AlignmentFlag.AlignVCenter), shown)
