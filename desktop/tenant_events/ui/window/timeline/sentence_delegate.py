"""The Summary cell drawn as its sentence with the names in the link colour; a click on a name is reported, and
the pointer is a pointing hand while over a name (as over a link), the arrow elsewhere.

Only the parts of the sentence are laid out per paint (a few `horizontalAdvance` calls); the sentence itself was
made when its page was read (entities/page_names.py). Rows without a sentence paint as plain text.
"""

from __future__ import annotations

from collections.abc import Iterator

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, QPoint, QRect, Qt, Signal
from PySide6.QtGui import QFontMetrics, QMouseEvent, QPainter, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QWidget,
)

from tenant_events.entities.sentences import Mention, Sentence
from tenant_events.ui.window.table.event_table_model import SENTENCE_ROLE

Index = QModelIndex | QPersistentModelIndex
Placed = tuple[str | Mention, int, int, str]  # part, x, width, the text drawn (elided at the end)


def lay_out(sentence: Sentence, metrics: QFontMetrics, left: int, right: int) -> Iterator[Placed]:
    """Each part's place on one line from `left`; the part that reaches `right` is elided and ends the line."""
    x = left
    for part in sentence.parts:
        text = part if isinstance(part, str) else part.label
        width = metrics.horizontalAdvance(text)
        if x + width > right:
            shown = metrics.elidedText(text, Qt.TextElideMode.ElideRight, right - x) or "…"  # say it goes on
            yield part, x, right - x, shown
            return
        yield part, x, width, text
        x += width


class SentenceDelegate(QStyledItemDelegate):
    mention_clicked = Signal(QModelIndex, object)  # the cell, the Mention clicked

    def __init__(self, view: QAbstractItemView) -> None:
        super().__init__(view)
        self._view = view
        view.viewport().setMouseTracking(True)  # moves without a button pressed, for the pointer's shape
        view.viewport().installEventFilter(self)

    def _text_span(self, option: QStyleOptionViewItem) -> tuple[QRect, int, int]:
        widget = option.widget
        style = widget.style() if isinstance(widget, QWidget) else QApplication.style()
        rect = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, option, widget)
        margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, widget) + 1
        return rect, rect.left() + margin, rect.right() - margin

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        sentence = index.data(SENTENCE_ROLE)
        if not isinstance(sentence, Sentence) or not sentence.mentions:
            super().paint(painter, option, index)
            return
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        widget = opt.widget
        style = widget.style() if isinstance(widget, QWidget) else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        rect, left, right = self._text_span(opt)
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        palette: QPalette = opt.palette
        plain = palette.color(QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text)
        link = plain if selected else palette.color(QPalette.ColorRole.Link)
        painter.save()
        painter.setFont(opt.font)
        align = Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft
        for part, x, width, text in lay_out(sentence, opt.fontMetrics, left, right):
            painter.setPen(link if isinstance(part, Mention) else plain)
            painter.drawText(QRect(x, rect.y(), width + 1, rect.height()), align, text)
        painter.restore()

    def mention_at(self, option: QStyleOptionViewItem, index: Index, x: int) -> Mention | None:
        """The name drawn at `x` in the cell, if any."""
        sentence = index.data(SENTENCE_ROLE)
        if not isinstance(sentence, Sentence):
            return None
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        _rect, left, right = self._text_span(opt)
        for part, start, width, _text in lay_out(sentence, opt.fontMetrics, left, right):
            if isinstance(part, Mention) and start <= x < start + width:
                return part
        return None

    def editorEvent(self, event: QEvent, model: object, option: QStyleOptionViewItem, index: Index) -> bool:
        """A left click on a name reports it; the click still selects the row (returns False)."""
        if (
            event.type() == QEvent.Type.MouseButtonRelease
            and isinstance(event, QMouseEvent)
            and event.button() == Qt.MouseButton.LeftButton
        ):
            mention = self.mention_at(option, index, int(event.position().x()))
            if mention is not None:
                self.mention_clicked.emit(index, mention)
        return False

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """The pointing hand over a name in a cell of this delegate's, the view's own pointer elsewhere."""
        if event.type() == QEvent.Type.MouseMove and isinstance(event, QMouseEvent):
            self._point_at(event.position().toPoint())
        elif event.type() == QEvent.Type.Leave:
            self._view.viewport().unsetCursor()
        return False

    def _point_at(self, pos: QPoint) -> None:
        view, viewport = self._view, self._view.viewport()
        index = view.indexAt(pos)
        delegate = view.itemDelegateForIndex(index) if index.isValid() else None
        if delegate is not self:
            if not isinstance(delegate, SentenceDelegate):  # another name delegate's cell: it decides
                viewport.unsetCursor()
            return
        option = QStyleOptionViewItem()
        option.initFrom(view)
        option.widget = view
        option.rect = view.visualRect(index)
        if self.mention_at(option, index, pos.x()) is not None:
            viewport.setCursor(Qt.CursorShape.PointingHandCursor)
        else:
            viewport.unsetCursor()
