"""The Access tab beside the event table: its page, the controller that fills it, and its report export. The
window holds one `AccessTab`; everything else is wired here."""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from PySide6.QtWidgets import QFrame, QScrollArea, QTabWidget, QWidget

from tenant_events.ui.window.access.access_controller import AccessController, AccessHost
from tenant_events.ui.window.access.access_page import AccessPage
from tenant_events.ui.window.access.report_writer import ReportExport


class TabHost(AccessHost, Protocol):
    pages: QTabWidget

    def window(self) -> QWidget: ...
    def confirm(self, text: str) -> None: ...
    def keep_task(self, task: asyncio.Task[Any]) -> None: ...


class AccessTab:
    def __init__(self, window: TabHost) -> None:
        self.w = window
        self.page = AccessPage()
        # In a scroll area: the view's controls need about 970 px, and a tab's minimum is the window's, so the
        # window could no longer be made narrower than that for the event table's sake.
        room = QScrollArea()
        room.setWidget(self.page)
        room.setWidgetResizable(True)
        room.setFrameShape(QFrame.Shape.NoFrame)
        self.index = window.pages.addTab(room, "Access")
        window.pages.setTabToolTip(self.index, "Who held which access at a moment, and what changed (Ctrl+2)")
        self.controller = AccessController(window, self.page)
        self.exporter = ReportExport(window.window(), window)
        self.page.export_button.clicked.connect(self.export)
        window.pages.currentChanged.connect(self._tab_changed)

    def _tab_changed(self, index: int) -> None:
        if index == self.index:
            self.controller.page_shown()

    def show(self) -> None:
        self.w.pages.setCurrentIndex(self.index)

    def export(self) -> None:
        """Export what the view shows; from the Events tab, open the view first (its answer is read then)."""
        if self.w.pages.currentIndex() != self.index or self.controller.shown is None:
            self.show()
            self.controller.answered.connect(self._export_when_read)
            return
        self.exporter.ask(self.controller.shown, self.controller.current_filter())

    def _export_when_read(self, _answer: object) -> None:
        self.controller.answered.disconnect(self._export_when_read)
        self.export()

    def events_stored(self, tenant: str) -> None:
        self.controller.events_stored(tenant)

    def close(self) -> None:
        self.controller.close()
