"""Activity histogram above the table: events per time bucket stacked by family; drag to pick a time range."""

from __future__ import annotations

from datetime import UTC, datetime

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QSizePolicy, QWidget

from tenant_events.ui.theme import family_color, is_dark

MIN_BARS = 60
FAMILY_ORDER = ("user", "group", "organization")
Buckets = list[tuple[int, dict[str, int]]]


class Histogram(QWidget):
    range_selected = Signal(object, object)  # since, until (aware datetimes)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.buckets: Buckets = []
        self.bucket_s = 60
        self._drag: tuple[float, float] | None = None
        self.setMinimumHeight(64)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setAccessibleName("Activity histogram")
        self.setToolTip("Events per time bucket by family; drag to filter to a time range")
        self.setCursor(Qt.CursorShape.CrossCursor)

    def sizeHint(self) -> QSize:
        return QSize(400, 72)

    def set_data(self, buckets: Buckets, bucket_s: int) -> None:
        self.buckets, self.bucket_s = buckets, bucket_s
        self.setAccessibleDescription(
            f"{sum(sum(b.values()) for _, b in buckets):,} events in {len(buckets)} buckets"
        )
        self.update()

    def _span(self) -> tuple[int, int]:
        """At least MIN_BARS buckets wide, so a handful of events draw thin bars at the right, not a slab."""
        if not self.buckets:
            return 0, 1
        end = self.buckets[-1][0] + self.bucket_s
        return min(self.buckets[0][0], end - MIN_BARS * self.bucket_s), end

    def _time_at(self, x: float) -> datetime:
        start, end = self._span()
        frac = min(max(x / max(1, self.width()), 0.0), 1.0)
        return datetime.fromtimestamp(start + frac * (end - start), UTC)

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        p.fillRect(self.rect(), self.palette().color(QPalette.ColorRole.Base))
        if not self.buckets:
            p.setPen(self.palette().color(QPalette.ColorRole.PlaceholderText))
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "No events for this filter yet")
            return
        dark = is_dark()
        start, end = self._span()
        width, height = self.width(), self.height() - 16
        peak = max(sum(b.values()) for _, b in self.buckets) or 1
        bar_w = max(1.0, width * self.bucket_s / (end - start) - 1)
        for t0, by_family in self.buckets:
            x = (t0 - start) / (end - start) * width
            y = float(height + 2)
            for fam in FAMILY_ORDER:
                n = by_family.get(fam, 0)
                if n:
                    h = n / peak * (height - 2)
                    p.fillRect(QRectF(x, y - h, bar_w, h), family_color(fam, dark))
                    y -= h
        p.setPen(self.palette().color(QPalette.ColorRole.PlaceholderText))
        label_rect = self.rect().adjusted(4, 0, -4, 0)
        fmt = "%H:%M" if end - start < 86400 else "%b %d %H:%M"
        p.drawText(label_rect, Qt.AlignmentFlag.AlignBottom | Qt.AlignmentFlag.AlignLeft, _local(start, fmt))
        p.drawText(label_rect, Qt.AlignmentFlag.AlignBottom | Qt.AlignmentFlag.AlignRight, _local(end, fmt))
        if self._drag is not None:
            a, b = sorted(self._drag)
            sel = QColor(self.palette().color(QPalette.ColorRole.Highlight))
            sel.setAlpha(70)
            p.fillRect(QRectF(QPointF(a, 0), QPointF(b, self.height())), sel)
        p.end()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        x = event.position().x()
        self._drag = (x, x)
        self.update()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._drag is not None:
            self._drag = (self._drag[0], event.position().x())
            self.update()

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if self._drag is None:
            return
        a, b = sorted((self._drag[0], event.position().x()))
        self._drag = None
        self.update()
        if b - a >= 3 and self.buckets:
            self.range_selected.emit(self._time_at(a), self._time_at(b))


def _local(epoch: int, fmt: str) -> str:
    return datetime.fromtimestamp(epoch).strftime(fmt)
