"""Light, dark or system theme: Fusion with an explicit palette, so both look the same on every desktop.

"system" follows `QStyleHints.colorScheme()` and its changes (Qt ≥ 6.5); where the platform cannot tell
(plain X11, Xvfb) it is light. Family colours for the table and histogram live here too, tuned per theme.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

THEMES = ("system", "light", "dark")

# Event families (EventType.family) -> colour on a light / dark background.
FAMILY_COLORS: dict[str, tuple[str, str]] = {
    "user": ("#1a7f37", "#3fb950"),
    "group": ("#8250df", "#a371f7"),
    "organization": ("#0969da", "#58a6ff"),
}
TENANT_COLORS = ("#bf8700", "#cf222e", "#1f883d", "#8250df", "#0969da", "#bc4c00")


def is_dark(app: QGuiApplication | None = None) -> bool:
    app = app or QGuiApplication.instance()  # type: ignore[assignment]
    if app is None:
        return False
    return app.palette().color(QPalette.ColorRole.Window).lightness() < 128


def family_color(family: str, dark: bool) -> QColor:
    light_hex, dark_hex = FAMILY_COLORS.get(family, ("#57606a", "#8b949e"))
    return QColor(dark_hex if dark else light_hex)


def _dark_palette() -> QPalette:
    p = QPalette()
    roles = QPalette.ColorRole
    for role, hexcolor in (
        (roles.Window, "#22272e"),
        (roles.WindowText, "#e6edf3"),
        (roles.Base, "#1c2128"),
        (roles.AlternateBase, "#262c36"),
        (roles.ToolTipBase, "#2d333b"),
        (roles.ToolTipText, "#e6edf3"),
        (roles.Text, "#e6edf3"),
        (roles.Button, "#2d333b"),
        (roles.ButtonText, "#e6edf3"),
        (roles.BrightText, "#ff7b72"),
        (roles.Link, "#58a6ff"),
        (roles.Highlight, "#316dca"),
        (roles.HighlightedText, "#ffffff"),
        (roles.PlaceholderText, "#8b949e"),
        (roles.Mid, "#444c56"),
        (roles.Dark, "#1c2128"),
    ):
        p.setColor(role, QColor(hexcolor))
    for role in (roles.Text, roles.WindowText, roles.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, role, QColor("#6e7681"))
    return p


def _light_palette() -> QPalette:
    p = QApplication.style().standardPalette() if QApplication.style() else QPalette()
    p.setColor(QPalette.ColorRole.Highlight, QColor("#0969da"))
    p.setColor(QPalette.ColorRole.HighlightedText, QColor("#ffffff"))
    return p


def wants_dark(theme: str, app: QGuiApplication) -> bool:
    if theme == "dark":
        return True
    if theme == "light":
        return False
    return app.styleHints().colorScheme() == Qt.ColorScheme.Dark


def apply_theme(app: QApplication, theme: str) -> bool:
    """Apply `theme` ("system" | "light" | "dark"); returns whether the result is dark."""
    if theme not in THEMES:
        raise ValueError(f"unknown theme {theme!r}: expected one of {', '.join(THEMES)}")
    app.setStyle("Fusion")
    dark = wants_dark(theme, app)
    app.setPalette(_dark_palette() if dark else _light_palette())
    return dark
