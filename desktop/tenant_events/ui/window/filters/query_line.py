"""The query line: the filter bar's search box, which takes the query language (tenant_events.query).

The filter bar checks each edit; a query that cannot run keeps the last good filter and, once typing pauses,
its wrong part gets a red wavy underline with the reason beside it. The underline is a text format on the line
edit's own text layout, set through an input-method event (QLineEdit has no other way to format part of its
text), so it scrolls with the text.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QInputMethodEvent, QTextCharFormat
from PySide6.QtWidgets import QLineEdit, QWidget

from tenant_events.query import FIELDS, QueryError
from tenant_events.ui.look.theme import error_color

PLACEHOLDER = "Search, or filter: type:user.* -purpose:test org:acme OR org:globex  (Ctrl+F)"
HELP = (
    'Words find events with words that start with them; "quotes" find a phrase.\n'
    f"field:value looks in one field: {', '.join(f.name for f in FIELDS)}.\n"
    "  type:user.deleted   type:organization.*   user:ada   email:ada@example.com   org:acme\n"
    "-term leaves out · a OR b either one · (…) groups · * is a wildcard inside a value"
)


class QueryLine(QLineEdit):
    """A line edit that can underline the part of its text a `QueryError` points at."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setPlaceholderText(PLACEHOLDER)
        self.setToolTip(HELP)
        self.setAccessibleName("Search or query events")
        self.setClearButtonEnabled(True)
        self.error: QueryError | None = None

    def show_error(self, error: QueryError | None) -> None:
        """Underline `error`'s span (None: no underline) and say the reason to assistive tech."""
        self.error = error
        self.setAccessibleDescription(error.reason if error else "")
        attributes = []
        if error is not None:
            fmt = QTextCharFormat()
            fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
            fmt.setUnderlineColor(error_color())
            tint = error_color()
            tint.setAlpha(50)  # the wave is thin at small font sizes: a tint marks the span too
            fmt.setBackground(tint)
            start = min(error.start, len(self.text()))
            length = max(1, min(error.end, len(self.text())) - start)
            attributes.append(
                QInputMethodEvent.Attribute(
                    QInputMethodEvent.AttributeType.TextFormat, start - self.cursorPosition(), length, fmt
                )
            )
        QCoreApplication.sendEvent(self, QInputMethodEvent("", attributes))
