"""A rich-text QLabel whose links follow the theme.

QLabel lays its rich text out once, with the palette of that moment: after a theme switch its links kept the old
theme's Link colour (dark blue on dark grey). This one lays the text out again when the palette changes.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QLabel, QWidget


class LinkLabel(QLabel):
    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setTextFormat(Qt.TextFormat.RichText)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange) and self.text():
            text = self.text()
            self.clear()  # setText() skips an unchanged text: clear first so the document is built anew
            self.setText(text)
