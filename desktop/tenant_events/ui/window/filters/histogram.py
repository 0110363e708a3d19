"""Activity histogram above the table: events per time bucket stacked by family, with a legend; hover a bar for
its time and counts; drag to zoom to a time range (histogram_zoom.py turns that into the filter's range);
right-click or Escape to zoom back out.

The x axis is the filter's own range when it has one, so after a zoom the bars fill the width; without a range
it is the data's extent, at least MIN_BARS buckets wide.
"""

from __future__ import annotations

from datetime import UTC, datetime

from PySide6.QtCore import QEvent, QPointF, QRect, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFontMetrics,
    QHelpEvent,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPalette,
)
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from tenant_events.ui.look.theme import family_color, is_dark

MIN_BARS = 20  # a span this many bars wide at least; the bucket size already gives 20–120 bars over the data
FAMILY_ORDER = ("user", "group", "organization")
AXIS_H = 16  # the bottom strip: start time, legend, end time
Buckets = list[tuple[int, dict[str, int]]]


class Histogram(QWidget):
    range_selected = Signal(object, object)  # since, until (aware datetimes)
    zoom_out_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.buckets: Buckets = []
        self.bucket_s = 60
        self.span: tuple[int, int] | None = None  # the filter's range (unix s), None: the data's extent
        self._drag: tuple[float, float] | None = None
        self.setMinimumHeight(72)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setAccessibleName("Activity histogram")
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)  # Escape zooms out after a drag
        self.setMouseTracking(True)
        self.setCursor(Qt.CursorShape.CrossCursor)

    def sizeHint(self) -> QSize:
        return QSize(400, 84)

    def set_data(self, buckets: Buckets, bucket_s: int, span: tuple[int, int] | None = None) -> None:
        self.buckets, self.bucket_s, self.span = buckets, bucket_s, span
        total = sum(sum(b.values()) for _, b in buckets)
        start, end = self._span()
        self.setAccessibleDescription(
            f"{total:,} events from {_local(start, '%Y-%m-%d %H:%M:%S')} to {_local(end, '%Y-%m-%d %H:%M:%S')},"
            f" {len(buckets)} bars. Drag to zoom to a time range; right-click or Escape zooms out."
        )
        self.update()

    # -- geometry --------------------------------------------------------------------------------------------
    def _span(self) -> tuple[int, int]:
        """The filter's range, else the data's extent (at least MIN_BARS bars): the bars fill the width rather
        than a fixed 60-bar span leaving up to two thirds of it empty."""
        if self.span is not None:
            return self.span
        if not self.buckets:
            return 0, 1
        end = self.buckets[-1][0] + self.bucket_s
        return min(self.buckets[0][0], end - MIN_BARS * self.bucket_s), end

    def _time_at(self, x: float) -> datetime:
        start, end = self._span()
        frac = min(max(x / max(1, self.width()), 0.0), 1.0)
        return datetime.fromtimestamp(start + frac * (end - start), UTC)

    def bucket_at(self, x: float) -> tuple[int, dict[str, int]] | None:
        """The bucket drawn under x (None over empty space)."""
        if not self.buckets:
            return None
        at = self._time_at(x).timestamp()
        for t0, by_family in self.buckets:
            if t0 <= at < t0 + self.bucket_s:
                return t0, by_family
        return None

    def bucket_text(self, bucket: tuple[int, dict[str, int]]) -> str:
        t0, by_family = bucket
        fmt = "%H:%M:%S" if self.bucket_s < 86400 else "%Y-%m-%d"
        day = "" if _same_day(t0) else _local(t0, "%Y-%m-%d ")
        when = f"{day}{_local(t0, fmt)}–{_local(t0 + self.bucket_s, fmt)}"
        lines = [f"{fam}: {by_family.get(fam, 0):,}" for fam in FAMILY_ORDER]
        return "\n".join([when, *lines, f"total: {sum(by_family.values()):,}"])

    # -- painting --------------------------------------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        p.fillRect(self.rect(), self.palette().color(QPalette.ColorRole.Base))
        muted = self.palette().color(QPalette.ColorRole.PlaceholderText)
        if not self.buckets:
            p.setPen(muted)
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "No events for this filter yet")
            p.end()
            return
        dark = is_dark()
        start, end = self._span()
        width, height = self.width(), self.height() - AXIS_H
        peak = max(sum(b.values()) for _, b in self.buckets) or 1
        bar_w = max(1.0, width * self.bucket_s / (end - start) - 1)
        for t0, by_family in self.buckets:
            x = (t0 - start) / (end - start) * width
            y = float(height)
            for fam in FAMILY_ORDER:
                n = by_family.get(fam, 0)
                if n:
                    h = n / peak * (height - 4)
                    p.fillRect(QRectF(x, y - h, bar_w, h), family_color(fam, dark))
                    y -= h
        self._paint_axis(p, start, end, muted, dark)
        if self._drag is not None:
            a, b = sorted(self._drag)
            sel = QColor(self.palette().color(QPalette.ColorRole.Highlight))
            sel.setAlpha(70)
            p.fillRect(QRectF(QPointF(a, 0), QPointF(b, self.height())), sel)
        p.end()

    def _paint_axis(self, p: QPainter, start: int, end: int, muted: QColor, dark: bool) -> None:
        fm = QFontMetrics(self.font())
        strip = QRect(4, self.height() - AXIS_H, self.width() - 8, AXIS_H)
        fmt = axis_format(end - start)
        p.setPen(muted)
        p.drawText(strip, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, _local(start, fmt))
        p.drawText(strip, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight, _local(end, fmt))
        # the legend, centred: a swatch and the family name each
        items = [(fam, fm.horizontalAdvance(fam)) for fam in FAMILY_ORDER]
        swatch, gap = 10, 14
        total = sum(w + swatch + 4 for _, w in items) + gap * (len(items) - 1)
        x = strip.center().x() - total // 2
        for fam, w in items:
            y = strip.center().y() - swatch // 2 + 1
            p.fillRect(QRect(x, y, swatch, swatch), family_color(fam, dark))
            x += swatch + 4
            p.setPen(self.palette().color(QPalette.ColorRole.Text))
            p.drawText(QRect(x, strip.y(), w + 2, AXIS_H), Qt.AlignmentFlag.AlignVCenter, fam)
            x += w + gap

    def legend_families(self) -> tuple[str, ...]:
        return FAMILY_ORDER

    # -- input -----------------------------------------------------------------------------------------------
    def event(self, e: QEvent) -> bool:
        if e.type() == QEvent.Type.ToolTip and isinstance(e, QHelpEvent):
            bucket = self.bucket_at(e.pos().x())
            if bucket is not None:
                QToolTip.showText(e.globalPos(), self.bucket_text(bucket), self)
            else:
                QToolTip.showText(
                    e.globalPos(), "Drag to zoom to a time range · right-click or Escape zooms out", self
                )
            return True
        return super().event(e)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.RightButton:
            self.zoom_out_requested.emit()
            return
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

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.zoom_out_requested.emit()
            return
        super().keyPressEvent(event)


def axis_format(span_s: float) -> str:
    """How the axis writes its two ends: a span of a month or more by date with its year (a year's histogram
    read "Nov 27 00:00 … Dec 03 00:00", a week for the eye)."""
    if span_s < 3600:
        return "%H:%M:%S"
    if span_s < 86400:
        return "%H:%M"
    return "%b %d %H:%M" if span_s < 31 * 86400 else "%Y-%m-%d"


def _local(epoch: int, fmt: str) -> str:
    return datetime.fromtimestamp(epoch).strftime(fmt)


def _same_day(epoch: int) -> bool:
    return datetime.fromtimestamp(epoch).date() == datetime.now().date()
