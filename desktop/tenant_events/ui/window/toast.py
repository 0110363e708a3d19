"""A short confirmation floating over a widget ("Copied event as JSON"), gone after a moment.

Screen readers hear it too: the label's accessible name changes with the text (it is an alert-like label).
"""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel, QWidget

SHOW_MS = 1800
SAY_MS = 6000  # a sentence that explains, not a confirmation


class Toast(QLabel):
    def __init__(self, host: QWidget) -> None:
        super().__init__(host)
        self.host = host
        self.setObjectName("toast")
        self.setStyleSheet(
            "#toast { background: palette(tool-tip-base); color: palette(tool-tip-text);"
            " border: 1px solid palette(mid); border-radius: 6px; padding: 6px 12px; }"
        )
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(SHOW_MS)
        self._timer.timeout.connect(self.hide)
        self.hide()

    def show_text(self, text: str, ms: int = SHOW_MS) -> None:
        self.setText(text)
        self.setAccessibleName(text)
        self.adjustSize()
        self.move((self.host.width() - self.width()) // 2, self.host.height() - self.height() - 16)
        self.show()
        self.raise_()
        self._timer.start(ms)
