"""Zooming the time range: a drag on the histogram zooms in (the filter's range becomes the selection), right-click,
Escape or "Reset zoom" go back; "Custom…" in the time menu opens the date-time range dialog.

Each zoom pushes the range it replaced (the time menu's entry and any custom range) on a stack; zooming out pops
one, "Reset zoom" returns to the range before the first zoom. Picking a range by hand clears the stack.
"""

from __future__ import annotations

from datetime import datetime

from PySide6.QtCore import QEvent, QObject, Signal
from PySide6.QtWidgets import QComboBox, QToolButton, QWidget

from tenant_events.ui.dialogs.time_range_dialog import TimeRangeDialog
from tenant_events.ui.window.filters.filter_bar import CUSTOM, FilterBar
from tenant_events.ui.window.filters.histogram import Histogram

Range = tuple[int, tuple[datetime, datetime] | None]  # (time menu index, custom range)


class HistogramZoom(QObject):
    zoom_changed = Signal(int)  # depth of the zoom stack

    def __init__(self, histogram: Histogram, bar: FilterBar, parent: QWidget) -> None:
        super().__init__(parent)
        self.histogram, self.bar, self.parent_widget = histogram, bar, parent
        self.stack: list[Range] = []
        self.dialog: TimeRangeDialog | None = None
        self._applying = False
        box = bar.range_box
        box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)  # a range is never cut short
        box.setItemText(CUSTOM, "Custom…")
        box.activated.connect(self._range_picked)
        histogram.range_selected.connect(self.zoom_to)
        histogram.zoom_out_requested.connect(self.zoom_out)
        self.reset_button = QToolButton(histogram)
        self.reset_button.setText("Reset zoom")
        self.reset_button.setAccessibleName("Reset zoom")
        self.reset_button.setToolTip(
            "Back to the time range before zooming (right-click or Escape: one step)"
        )
        self.reset_button.clicked.connect(self.reset)
        self.reset_button.hide()
        histogram.installEventFilter(self)

    def _current(self) -> Range:
        return self.bar.range_box.currentIndex(), self.bar.custom_range

    def _set(self, state: Range) -> None:
        index, custom = state
        self._applying = True
        try:
            if index == CUSTOM and custom is not None:
                self.bar.set_custom_range(*custom)
            else:
                self.bar.custom_range = None
                self.bar.range_box.setItemText(CUSTOM, "Custom…")
                if self.bar.range_box.currentIndex() == index:
                    self.bar.filter_changed.emit()
                else:
                    self.bar.range_box.setCurrentIndex(index)
        finally:
            self._applying = False
        self._changed()

    def zoom_to(self, since: datetime, until: datetime) -> None:
        self.stack.append(self._current())
        self._applying = True
        try:
            self.bar.set_custom_range(since, until)
        finally:
            self._applying = False
        self._changed()

    def zoom_out(self) -> None:
        if self.stack:
            self._set(self.stack.pop())

    def reset(self) -> None:
        if self.stack:
            first = self.stack[0]
            self.stack.clear()
            self._set(first)

    def _changed(self) -> None:
        depth = len(self.stack)
        self.reset_button.setVisible(depth > 0)
        self._place()
        self.zoom_changed.emit(depth)

    def _place(self) -> None:
        b = self.reset_button
        b.adjustSize()
        b.move(self.histogram.width() - b.width() - 4, 2)
        b.raise_()

    def _range_picked(self, index: int) -> None:
        """A choice in the time menu by the user (not by code): a new range, so the zoom history goes."""
        if self._applying:
            return
        self.stack.clear()
        self._changed()
        if index == CUSTOM:
            self.open_custom()

    def open_custom(self) -> None:
        """The date-time range dialog, prefilled with the range shown now."""
        since, until = self.bar.custom_range or (None, None)
        before = self.bar.custom_range
        dialog = TimeRangeDialog(since, until, self.parent_widget)
        dialog.range_chosen.connect(self._custom_chosen)
        dialog.rejected.connect(lambda: self._custom_cancelled(before))
        dialog.finished.connect(lambda _r: dialog.deleteLater())
        self.dialog = dialog
        dialog.open()

    def _custom_chosen(self, since: datetime, until: datetime) -> None:
        self.stack.clear()  # a range typed in is a fresh start, like any menu choice
        self._applying = True
        try:
            self.bar.set_custom_range(since, until)
        finally:
            self._applying = False
        self._changed()

    def _custom_cancelled(self, before: tuple[datetime, datetime] | None) -> None:
        if before is None:  # "Custom…" with no range yet and cancelled: back to any time
            self._set((0, None))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.histogram and event.type() == QEvent.Type.Resize:
            self._place()
        return False
