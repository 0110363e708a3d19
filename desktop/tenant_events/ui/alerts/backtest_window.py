"""The rules editor's "Backtest": what the rule as edited (before saving) would have raised over each tenant's
whole stored history, per day, beside the rule as it stands, drawn as a small bar chart.

    ┌ Mass deletion by one actor · acme — 4 alerts on 3 days; as it stands 7 (-3) · 0.4 s ─────────┐
    │  ▇       ▇▇                     bars: the rule as edited; outline: as it stands; red: the budget │
    │ 11-19   11-20   11-21 …                                                                         │
    └──────────────────────────────────────────────────────────────────────────────────────────────────┘
"""

from __future__ import annotations

from typing import Final

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QDialog, QLabel, QVBoxLayout, QWidget

from tenant_events.alerts.backtest import Backtest
from tenant_events.ui.look.colors import pick
from tenant_events.ui.look.theme import is_dark

BAR: Final = ("#0969da", "#58a6ff")
STANDING: Final = ("#8c959f", "#6e7681")
BUDGET: Final = ("#cf222e", "#ff7b72")
MAX_BARS: Final = 120  # the latest days shown (a year of history would be hairlines)


class BacktestChart(QWidget):
    """Alerts per day as bars; the rule as it stands as an outline behind each; the budget as a line."""

    def __init__(self, report: Backtest, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.report = report
        self.days = report.all_days()[-MAX_BARS:]
        self.setMinimumSize(480, 180)
        self.setAccessibleName(f"Alerts per day, {report.name}")

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        dark = is_dark()
        r = self.report
        standing = r.standing or {}
        top = max(
            [
                *(r.days.get(d, 0) for d in self.days),
                *(standing.get(d, 0) for d in self.days),
                r.budget or 0,
                1,
            ]
        )
        left, bottom, right, head = 36.0, self.height() - 24.0, self.width() - 8.0, 8.0
        height = bottom - head
        text = self.palette().text().color()
        p.setPen(text)
        p.drawText(QRectF(0, head - 6, left - 4, 14), Qt.AlignmentFlag.AlignRight, str(top))
        p.drawText(QRectF(0, bottom - 8, left - 4, 14), Qt.AlignmentFlag.AlignRight, "0")
        p.drawLine(QPointF(left, bottom), QPointF(right, bottom))
        if not self.days:
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "No alerts in the stored history.")
            return
        step = (right - left) / len(self.days)
        width = max(1.0, step * 0.7)
        for i, day in enumerate(self.days):
            x = left + i * step + (step - width) / 2
            was = standing.get(day, 0)
            if r.standing is not None and was:
                p.setPen(QPen(QColor(pick(STANDING, dark)), 1.5))
                p.setBrush(Qt.BrushStyle.NoBrush)
                h = height * was / top
                p.drawRect(QRectF(x - 1, bottom - h, width + 2, h))
            n = r.days.get(day, 0)
            if n:
                p.setPen(Qt.PenStyle.NoPen)
                p.setBrush(QColor(pick(BUDGET if day in r.over else BAR, dark)))
                h = height * n / top
                p.drawRect(QRectF(x, bottom - h, width, h))
        if r.budget is not None:
            y = bottom - height * r.budget / top
            p.setPen(QPen(QColor(pick(BUDGET, dark)), 1, Qt.PenStyle.DashLine))
            p.drawLine(QPointF(left, y), QPointF(right, y))
        p.setPen(text)
        labels = {0, len(self.days) - 1, len(self.days) // 2}
        for i in sorted(labels):
            x = left + i * step
            p.drawText(QRectF(x - 30, bottom + 4, 80, 16), Qt.AlignmentFlag.AlignLeft, self.days[i][5:])


def summary(report: Backtest, profile: str) -> str:
    """ "acme — 4 alerts on 3 days; as it stands 7 (-3) · 0.4 s" (the totals line of the report)."""
    return f"{profile} — {report.lines()[-1]} · {report.seconds:.1f} s"


class BacktestWindow(QDialog):
    """One chart per tenant with a store."""

    def __init__(self, reports: list[tuple[str, Backtest]], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        name = reports[0][1].name if reports else "the rule"
        self.setWindowTitle(f"Backtest: {name} — Tenant Events")
        layout = QVBoxLayout(self)
        self.charts: list[BacktestChart] = []
        if not reports:
            layout.addWidget(QLabel("No events stored yet to backtest the rule on."))
        for profile, report in reports:
            line = QLabel(summary(report, profile))
            line.setWordWrap(True)
            layout.addWidget(line)
            chart = BacktestChart(report)
            self.charts.append(chart)
            layout.addWidget(chart, 1)
        legend = QLabel(
            "Bars: alerts per day of the rule as edited · outlines: the rule as it stands · "
            "red: days over its budget (max alerts per day)"
        )
        legend.setWordWrap(True)
        layout.addWidget(legend)
        self.resize(720, 160 + 220 * max(1, len(reports)))
