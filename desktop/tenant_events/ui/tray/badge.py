"""Badges on the tray icon: the unread alert count (bottom right) and a do-not-disturb mark (top left).

Drawn over every size of the state icon, so a 22 px panel and a 64 px one both get a sharp badge. The mark
is a filled circle with a bar (a "no entry" sign: notifications held), the count a red circle with 1–9 or "9+"
(a plain dot under 12 px, where digits cannot be read; the tooltip and the menu say the number). Each badge takes
a corner, well under half the icon's side, so the state icon still reads beside them.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QIcon, QPainter, QPen, QPixmap

from tenant_events.ui.look.icons import TRAY_SIZES

UNREAD_COLOR = "#cf222e"
MUTED_COLOR = "#6e40c9"
BADGE_SHARE = 0.38  # of the icon's side: 8 px on a 22 px panel (0.55 covered 59 % of it)
DIGITS_FROM = 12.0  # px: a smaller badge is a dot


def badged(icon: QIcon, unread: int, muted: bool) -> QIcon:
    """`icon` with the badges that apply (the icon itself when none does)."""
    if unread <= 0 and not muted:
        return icon
    out = QIcon()
    for size in TRAY_SIZES:
        pixmap = icon.pixmap(size, size)
        if pixmap.isNull():
            continue
        out.addPixmap(_draw(pixmap, unread, muted))
    return out


def _draw(base: QPixmap, unread: int, muted: bool) -> QPixmap:
    pixmap = QPixmap(base)
    side = float(min(pixmap.width(), pixmap.height()))
    d = max(7.0, side * BADGE_SHARE)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    outline = QPen(QColor("#ffffff"), max(1.0, side / 22))
    if muted:
        box = QRectF(0, 0, d, d)
        painter.setPen(outline)
        painter.setBrush(QColor(MUTED_COLOR))
        painter.drawEllipse(box)
        bar = QRectF(d * 0.22, d * 0.42, d * 0.56, d * 0.16)
        painter.fillRect(bar, QColor("#ffffff"))
    if unread > 0:
        box = QRectF(side - d, side - d, d, d)
        painter.setPen(outline)
        painter.setBrush(QColor(UNREAD_COLOR))
        painter.drawEllipse(box)
        if d < DIGITS_FROM:
            painter.end()
            return pixmap
        font = QFont()
        font.setBold(True)
        font.setPixelSize(max(6, int(d * 0.6)))
        painter.setFont(font)
        painter.setPen(QColor("#ffffff"))
        painter.drawText(box, Qt.AlignmentFlag.AlignCenter, str(unread) if unread < 10 else "9+")
    painter.end()
    return pixmap
