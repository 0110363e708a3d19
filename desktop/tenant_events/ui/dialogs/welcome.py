"""First run: "Try the demo tenant" or "Connect your tenant"."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QCommandLinkButton, QDialog, QLabel, QVBoxLayout, QWidget

from tenant_events.ui.look.icons import app_icon
from tenant_events.ui.look.theme import error_color


class WelcomeWindow(QDialog):
    demo_requested = Signal()
    connect_requested = Signal()
    hub_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Welcome to Tenant Events")
        self.setWindowIcon(app_icon())
        self.setMinimumWidth(520)
        logo = QLabel()
        logo.setPixmap(app_icon().pixmap(72, 72))
        logo.setAlignment(Qt.AlignmentFlag.AlignCenter)
        title = QLabel("<h2>Tenant Events</h2>")
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        intro = QLabel(
            "Follow your identity tenant's events live: sign-ups, deletions, role changes and more. "
            "They are stored on this computer, searchable, and the ones that matter raise a notification."
        )
        intro.setWordWrap(True)
        self.demo_button = QCommandLinkButton(
            "Try the demo tenant", "Starts a local simulated tenant and signs you in. No account needed."
        )
        self.demo_button.setAccessibleName("Try the demo tenant")
        self.connect_button = QCommandLinkButton(
            "Connect your tenant", "Use your tenant's domain and a native application's client ID."
        )
        self.connect_button.setAccessibleName("Connect your tenant")
        self.hub_button = QCommandLinkButton(
            "Connect to a team hub",
            "Read a tenant your team already follows, from its hub. No tenant sign-in.",
        )
        self.hub_button.setAccessibleName("Connect to a team hub")
        self.hub_button.clicked.connect(self.hub_requested.emit)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.demo_button.clicked.connect(self.demo_requested.emit)
        self.connect_button.clicked.connect(self.connect_requested.emit)
        layout = QVBoxLayout(self)
        layout.setSpacing(10)
        for w in (logo, title, intro, self.demo_button, self.connect_button, self.hub_button, self.status):
            layout.addWidget(w)

    def set_busy(self, text: str) -> None:
        self.status.setText(text)
        self.demo_button.setEnabled(not text)
        self.connect_button.setEnabled(not text)
        self.hub_button.setEnabled(not text)

    def show_problem(self, text: str) -> None:
        self.status.setText(f"<span style='color:{error_color().name()}'>{text}</span>")
        self.demo_button.setEnabled(True)
        self.connect_button.setEnabled(True)
        self.hub_button.setEnabled(True)
