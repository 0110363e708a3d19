"""Light, dark or system theme: Fusion with an explicit palette, so both look the same on every desktop.

"system" follows `QStyleHints.colorScheme()` and its changes (Qt ≥ 6.5); where the platform cannot tell
(plain X11, Xvfb) it is light. The colours themselves (palettes, families, tenants, JSON) are in colors.py, where
a test checks every text colour against WCAG AA in both themes.
"""

from __future__ import annotations

from typing import Final

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QGuiApplication,
    QIcon,
    QPainter,
    QPainterPath,
    QPalette,
    QPen,
    QPixmap,
)
from PySide6.QtWidgets import QApplication, QProxyStyle, QStyle, QStyleFactory, QStyleOption, QWidget

from tenant_events.ui.look.colors import (
    DARK,
    DARK_DISABLED_TEXT,
    ERROR_COLORS,
    FAMILY_COLORS,
    JSON_COLORS,
    LIGHT,
    OTHER_FAMILY,
    pick,
    tenant_hex,
)

THEMES = ("system", "light", "dark")


def is_dark(app: QGuiApplication | None = None) -> bool:
    app = app or QGuiApplication.instance()  # type: ignore[assignment]
    if app is None:
        return False
    return app.palette().color(QPalette.ColorRole.Window).lightness() < 128


def stripe(shifted_row: int) -> QBrush | None:
    """A table's row background, alternating. Qt's own alternation goes by the row's place, so rows put on top
    flip every stripe below them; a model passes the row less the rows put on top since it was filled, which
    keeps each row's stripe while it is read."""
    return QApplication.palette().brush(QPalette.ColorRole.AlternateBase) if shifted_row & 1 else None


def family_color(family: str, dark: bool) -> QColor:
    return QColor(pick(FAMILY_COLORS.get(family, OTHER_FAMILY), dark))


def tenant_color(tenant: str, dark: bool | None = None) -> QColor:
    """A stable colour per tenant, in the shade of the current theme unless `dark` says which."""
    return QColor(tenant_hex(tenant, is_dark() if dark is None else dark))


def tenant_chip(tenant: str, size: int = 10) -> QPixmap:
    """A small square of the tenant's colour (the Tenant column, the tenant selector)."""
    chip = QPixmap(size, size)
    chip.fill(tenant_color(tenant))
    return chip


def tenant_chips(tenants: list[str], size: int = 12) -> QIcon:
    """Every tenant's colour side by side in one square: the selector's "All tenants"."""
    chip = QPixmap(size, size)
    chip.fill(QColor(0, 0, 0, 0))
    painter = QPainter(chip)
    shown = tenants[:size]
    for k, tenant in enumerate(shown):
        left, right = k * size // len(shown), (k + 1) * size // len(shown)
        painter.fillRect(left, 0, right - left, size, tenant_color(tenant))
    painter.end()
    return QIcon(chip)


def error_color(dark: bool | None = None) -> QColor:
    """Text saying what is wrong, and the wavy line under the wrong part."""
    return QColor(pick(ERROR_COLORS, is_dark() if dark is None else dark))


def error_style(dark: bool | None = None) -> str:
    """A style sheet for a label that says what is wrong, in the current theme's error colour (a dialog is
    made when opened, so it follows the theme in use then)."""
    return f"color: {error_color(dark).name()}"


def json_colors(dark: bool) -> tuple[str, str, str]:
    """The detail pane's JSON colours: keys, strings, other literals."""
    key, string, literal = (pick(JSON_COLORS[k], dark) for k in ("key", "string", "literal"))
    return key, string, literal


def _palette(base: QPalette, colours: dict[str, str]) -> QPalette:
    for role, hexcolor in colours.items():
        base.setColor(getattr(QPalette.ColorRole, role), QColor(hexcolor))
    return base


_DIMMED: Final = (QPalette.ColorRole.Text, QPalette.ColorRole.WindowText, QPalette.ColorRole.ButtonText)


def _dark_palette() -> QPalette:
    p = _palette(QPalette(), DARK)
    for role in _DIMMED:
        p.setColor(QPalette.ColorGroup.Disabled, role, QColor(DARK_DISABLED_TEXT))
    return p


def _light_palette() -> QPalette:
    """Fusion's palette with LIGHT's roles set in the active and inactive groups; the disabled group keeps
    Fusion's dimmed text (set for every group, a disabled button looked like an enabled one)."""
    p = QApplication.style().standardPalette() if QApplication.style() else QPalette()
    dimmed = {role: p.color(QPalette.ColorGroup.Disabled, role) for role in _DIMMED}
    _palette(p, LIGHT)
    for role, colour in dimmed.items():
        p.setColor(QPalette.ColorGroup.Disabled, role, colour)
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
    (seen in the dark settings screenshot: unchecked types showed no box at all). A disabled box is drawn dim,
    so ticks that do nothing (Settings ▸ Notifications' types while per-type notifications are off) do not look
    active.
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
        state = option.state
        enabled = bool(state & QStyle.StateFlag.State_Enabled)
        painter.setPen(QPen(QColor("#8b949e" if enabled else "#484f58"), 1))
        painter.setBrush(QColor("#1c2128" if enabled else "#161b22"))
        painter.drawRoundedRect(box, 2, 2)
        ink = QColor("#e6edf3" if enabled else "#6e7681")
        mark = QPen(ink, 2)
        if state & QStyle.StateFlag.State_On:
            painter.setPen(mark)
            path = QPainterPath(QPointF(box.left() + side * 0.22, box.top() + side * 0.52))
            path.lineTo(box.left() + side * 0.42, box.top() + side * 0.72)
            path.lineTo(box.left() + side * 0.78, box.top() + side * 0.28)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawPath(path)
        elif state & QStyle.StateFlag.State_NoChange:
            painter.fillRect(box.adjusted(3, side / 2 - 1, -3, -(side / 2 - 1)), ink)
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
