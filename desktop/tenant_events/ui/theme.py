"""Light, dark or system theme: Fusion with an explicit palette, so both look the same on every desktop.

"system" follows `QStyleHints.colorScheme()` and its changes (Qt ≥ 6.5); where the platform cannot tell
(plain X11, Xvfb) it is light. Family colours for the table and histogram live here too, tuned per theme.
"""

from __future__ import annotations

import zlib

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QGuiApplication, QPainter, QPainterPath, QPalette, QPen
from PySide6.QtWidgets import QApplication, QProxyStyle, QStyle, QStyleFactory, QStyleOption, QWidget

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


def tenant_color(tenant: str) -> QColor:
    """A stable colour per tenant (the same every run: crc32, not Python's salted hash)."""
    return QColor(TENANT_COLORS[zlib.crc32(tenant.encode()) % len(TENANT_COLORS)])


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


class CheckboxStyle(QProxyStyle):
    """Fusion, but check boxes keep a visible frame on dark palettes.

    Fusion draws the box border a shade darker than the window colour, which vanishes on a dark base
    (seen in the dark settings screenshot: unchecked types showed no box at all).
    """

    def drawPrimitive(
        self,
        element: QStyle.PrimitiveElement,
        option: QStyleOption,
        painter: QPainter,
        widget: QWidget | None = None,
    ) -> None:
        boxes = (
            QStyle.PrimitiveElement.PE_IndicatorCheckBox,
            QStyle.PrimitiveElement.PE_IndicatorItemViewItemCheck,
        )
        if element not in boxes or not is_dark():
            super().drawPrimitive(element, option, painter, widget)
            return
        rect = option.rect.adjusted(1, 1, -1, -1)
        side = min(rect.width(), rect.height(), 14)
        box = QRectF(rect.x() + (rect.width() - side) / 2, rect.y() + (rect.height() - side) / 2, side, side)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(QColor("#8b949e"), 1))
        painter.setBrush(QColor("#1c2128"))
        painter.drawRoundedRect(box, 2, 2)
        state = option.state
        mark = QPen(QColor("#e6edf3"), 2)
        if state & QStyle.StateFlag.State_On:
            painter.setPen(mark)
            path = QPainterPath(QPointF(box.left() + side * 0.22, box.top() + side * 0.52))
            path.lineTo(box.left() + side * 0.42, box.top() + side * 0.72)
            path.lineTo(box.left() + side * 0.78, box.top() + side * 0.28)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawPath(path)
        elif state & QStyle.StateFlag.State_NoChange:
            painter.fillRect(box.adjusted(3, side / 2 - 1, -3, -(side / 2 - 1)), QColor("#e6edf3"))
        painter.restore()


def apply_theme(app: QApplication, theme: str) -> bool:
    """Apply `theme` ("system" | "light" | "dark"); returns whether the result is dark."""
    if theme not in THEMES:
        raise ValueError(f"unknown theme {theme!r}: expected one of {', '.join(THEMES)}")
    if not isinstance(app.style(), CheckboxStyle):
        app.setStyle(CheckboxStyle(QStyleFactory.create("Fusion")))
    dark = wants_dark(theme, app)
    app.setPalette(_dark_palette() if dark else _light_palette())
    return dark
