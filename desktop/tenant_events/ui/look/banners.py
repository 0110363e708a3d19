"""Banners at the top of a window: things the user must know for as long as they hold, not for 15 seconds
in the status bar (sign-ins that will not be remembered, the last run that died).

A `BannerArea` holds at most one banner per key; `show_banner` replaces that key's banner, `clear` removes
it. Links in a banner's text are emitted as `link_activated` (the owner decides how to open them).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

# (background, border, text) per level: readable in light and dark themes alike.
COLORS = {
    "warning": ("#fff8c5", "#d4a72c", "#3b2300"),
    "error": ("#ffebe9", "#cf222e", "#4c0a0a"),
    "info": ("#ddf4ff", "#54aeff", "#0a3069"),
}


class Banner(QFrame):
    """One message with an optional close button."""

    closed = Signal()
    link_activated = Signal(str)

    def __init__(self, level: str, html_text: str, closable: bool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        background, border, text = COLORS.get(level, COLORS["info"])
        self.setObjectName("banner")
        self.setStyleSheet(
            f"#banner {{ background: {background}; border: 1px solid {border}; border-radius: 6px; }}"
            f"#banner QLabel {{ color: {text}; background: transparent; }}"
        )
        self.label = QLabel(html_text)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.label.setOpenExternalLinks(False)
        self.label.linkActivated.connect(self.link_activated.emit)
        self.label.setAccessibleName(f"{level} banner")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 6, 6)
        layout.addWidget(self.label, 1)
        if closable:
            close = QToolButton()
            close.setText("✕")
            close.setAutoRaise(True)
            close.setToolTip("Dismiss")
            close.setAccessibleName("Dismiss")
            close.clicked.connect(self.closed.emit)
            layout.addWidget(close, 0, Qt.AlignmentFlag.AlignTop)

    @property
    def text(self) -> str:
        return self.label.text()


class BannerArea(QWidget):
    """A vertical stack of banners, empty (and taking no space) when there are none."""

    link_activated = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 4)
        self._layout.setSpacing(4)
        self.banners: dict[str, Banner] = {}
        self.setVisible(False)

    def show_banner(self, key: str, level: str, html_text: str, closable: bool = False) -> Banner:
        self.clear(key)
        banner = Banner(level, html_text, closable, self)
        banner.closed.connect(lambda: self.clear(key))
        banner.link_activated.connect(self.link_activated.emit)
        self.banners[key] = banner
        self._layout.addWidget(banner)
        self.setVisible(True)
        return banner

    def clear(self, key: str) -> None:
        banner = self.banners.pop(key, None)
        if banner is not None:
            self._layout.removeWidget(banner)
            banner.deleteLater()
        self.setVisible(bool(self.banners))

    def text(self, key: str) -> str:
        banner = self.banners.get(key)
        return banner.text if banner is not None else ""
