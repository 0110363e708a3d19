"""While a browser sign-in is pending: the address, copyable, in case no browser came up (RFC 8252).

`QDesktopServices.openUrl` returning True only means the desktop accepted the request, not that a browser opened, so the
address is always shown too, with Copy, Open again and Cancel (which ends the loopback listener's wait).
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from tenant_events.ui.look.banners import BannerArea


class SignInPrompt(QDialog):
    """Non-modal: the app keeps working (and streaming other tenants) while the user signs in."""

    open_requested = Signal(str)
    cancel_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Sign in — Tenant Events")
        self.setModal(False)
        self.setMinimumWidth(520)
        self.heading = QLabel()
        self.heading.setWordWrap(True)
        self.address = QLineEdit()
        self.address.setReadOnly(True)
        self.address.setAccessibleName("Sign-in address")
        self.copy_button = QPushButton("&Copy address")
        self.open_button = QPushButton("&Open again")
        self.cancel_button = QPushButton("Cancel sign-in")
        self.copy_button.clicked.connect(self.copy_address)
        self.open_button.clicked.connect(lambda: self.open_requested.emit(self.address.text()))
        self.cancel_button.clicked.connect(self.cancel_requested.emit)
        hint = QLabel("If no browser window opened, copy this address into your browser:")
        hint.setWordWrap(True)
        buttons = QHBoxLayout()
        buttons.addWidget(self.copy_button)
        buttons.addWidget(self.open_button)
        buttons.addStretch(1)
        buttons.addWidget(self.cancel_button)
        self.banners = BannerArea()
        layout = self._layout = QVBoxLayout(self)
        layout.addWidget(self.banners)
        layout.addWidget(self.heading)
        layout.addWidget(hint)
        layout.addWidget(self.address)
        layout.addLayout(buttons)

    def show_url(self, tenant: str, url: str) -> None:
        self.heading.setText(f"<b>Finish signing in to {html.escape(tenant)} in your browser.</b>")
        self.heading.setTextFormat(Qt.TextFormat.RichText)
        self.address.setText(url)
        self.address.setCursorPosition(0)
        self.show()
        self.raise_()

    def set_warning(self, html_text: str) -> None:
        """A lasting line above the address (e.g. that this sign-in will not be remembered); "" removes it."""
        if html_text:
            self.banners.show_banner("warning", "warning", html_text)
        else:
            self.banners.clear("warning")
        if self.isVisible():  # shown already: a window keeps its size, and a wrapped line would be cut off
            self._layout.activate()
            self.adjustSize()

    def copy_address(self) -> None:
        QGuiApplication.clipboard().setText(self.address.text())
        self.copy_button.setText("Copied")

    def done_waiting(self) -> None:
        self.copy_button.setText("&Copy address")
        self.hide()
