"""The main window: filter bar, activity histogram, the event table, the detail pane and the status bar.

It shows one tenant's store at a time (the tenant selector); every tenant keeps streaming in the background.
This module lays the parts out and wires them; what fills them from the tenants' stores (new rows, totals,
the aggregates on a worker thread) is the feed (feed_controller.py), and the helpers it composes take the
window through small Protocols of what they use, so none of them imports it back.
"""

from __future__ import annotations

import asyncio
from typing import Any

from PySide6.QtCore import QEvent, QModelIndex, QSettings, Qt, Signal
from PySide6.QtGui import QCloseEvent, QResizeEvent
from PySide6.QtWidgets import (
    QLineEdit,
    QMainWindow,
    QPlainTextEdit,
    QSplitter,
    QTabWidget,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from tenant_events.tenant.committed_rows import CommittedRows
from tenant_events.ui.dialogs.export_dialog import ViewExport
from tenant_events.ui.dialogs.rejected_dialog import RejectedDialog
from tenant_events.ui.look.banners import BannerArea
from tenant_events.ui.look.icons import app_icon
from tenant_events.ui.task_set import TaskSet
from tenant_events.ui.window import window_state
from tenant_events.ui.window.access.access_tab import AccessTab
from tenant_events.ui.window.background_reads import stop_background_reads
from tenant_events.ui.window.detail_pane import DetailPane
from tenant_events.ui.window.entity_views import EntityViews
from tenant_events.ui.window.event_actions import COPIED, EventActions
from tenant_events.ui.window.feed_controller import FeedController
from tenant_events.ui.window.filters.filter_bar import FilterBar
from tenant_events.ui.window.filters.histogram import Histogram
from tenant_events.ui.window.filters.histogram_zoom import HistogramZoom
from tenant_events.ui.window.filters.saved_filters import SavedFilters
from tenant_events.ui.window.status_line import StatusLine
from tenant_events.ui.window.table import event_selection, first_page
from tenant_events.ui.window.table.columns import ColumnLayout
from tenant_events.ui.window.table.event_table_model import EventTableModel
from tenant_events.ui.window.table.event_table_view import event_table_view
from tenant_events.ui.window.table.follow import FollowController
from tenant_events.ui.window.table.keyboard_nav import KeyboardNav
from tenant_events.ui.window.table.row_menu import RowMenu
from tenant_events.ui.window.toast import SAY_MS, Toast
from tenant_events.ui.window.window_menus import build_menus
from tenant_events.values.events import EventFilter
from tenant_events.view.tenant_reader import TenantReader
from tenant_events.view.tenant_status import TenantStatus

DETAIL_BESIDE_MIN = 360  # px: the detail pane beside the table is at least this wide, else it goes below


class MainWindow(QMainWindow):
    pause_toggled = Signal(bool)
    quit_requested = Signal()
    settings_requested = Signal()
    about_requested = Signal()  # Help ▸ About: the app opens it (it knows where the data and logs are)
    closed_to_tray = Signal()
    tenant_shown = Signal(str)
    unread_changed = Signal(int)
    aggregates_updated = Signal()

    def __init__(self, state_file: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Tenant Events")
        self.setWindowIcon(app_icon())
        self.resize(1280, 780)
        self.keep_in_tray = False
        self.tray_hint_shown = False
        self._state = QSettings(state_file, QSettings.Format.IniFormat)

        self.filter_bar = FilterBar()
        self.histogram = Histogram()
        self.model = EventTableModel()
        self.feed = FeedController(self)  # which tenant is shown, its new rows, totals and aggregates
        self.table = event_table_view(self.model)
        self.columns = ColumnLayout(self.table, self.model, self._state)
        self.detail = DetailPane()
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.table)
        self.splitter.addWidget(self.detail)
        self.splitter.setStretchFactor(0, 2)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([900, 380])
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(8, 8, 8, 4)
        self.banners = BannerArea()  # lasting notices: sign-ins not remembered, the last run died
        layout.addWidget(self.banners)
        events_page = QWidget()  # the Events tab; the Access tab beside it (access/access_tab.py)
        events = QVBoxLayout(events_page)
        events.setContentsMargins(0, 4, 0, 0)
        events.addWidget(self.filter_bar)
        events.addWidget(self.histogram)
        events.addWidget(self.splitter, 1)
        self.pages = QTabWidget()
        self.pages.setDocumentMode(True)
        self.pages.setAccessibleName("Events or access")
        self.pages.tabBar().setAccessibleName("Events or access")
        self.pages.addTab(events_page, "Events")
        layout.addWidget(self.pages, 1)
        self.setCentralWidget(central)

        self.status_line = StatusLine(self.statusBar())
        line = self.status_line
        self.state_label, self.gap_label, self.rejected_button = (
            line.state_label,
            line.gap_label,
            line.rejected_button,
        )
        self.rejected_button.clicked.connect(self.show_rejected)

        self.toast = Toast(central)  # not the splitter's child: a splitter makes every child widget a pane
        self.events = EventActions(self)
        self.tenant_shown.connect(
            lambda _name: self.events.clear_detail()
        )  # another store: none of its events
        self.open_request = 0  # the newest event the window was asked to open on (event_selection.py)
        self.follow = FollowController(self.table, self.model, self)
        self.follow.unseen_changed.connect(lambda _n: self._unread_updated())
        self.follow.said.connect(lambda text: self.toast.show_text(text, SAY_MS))
        self.follow.unpicked.connect(self.events.clear_detail)  # the pane too: a lookup of its row gives way
        self.row_menu = RowMenu(self.table, self.model, self.filter_bar, self.events)
        self.zoom = HistogramZoom(self.histogram, self.filter_bar, self)
        self.saved_filters = SavedFilters(self.filter_bar, self)
        self.exporter = ViewExport(self, self.events)
        self.menu_actions = build_menus(self)
        self.keyboard = KeyboardNav(self)
        self.entities = EntityViews(self)  # names as links, object timelines, "All tenants"
        self.access = AccessTab(self)  # who held which access at a moment, what changed between two
        self.pause_action = self.menu_actions.pause
        self.detail.copied.connect(lambda how: self.events.confirm(COPIED[how]))
        self.filter_bar.filter_changed.connect(self.apply_filter)
        self.filter_bar.tenant_changed.connect(self.show_tenant)
        self.table.selectionModel().currentRowChanged.connect(self._current_changed)
        self.first_page = first_page.attach(self, self.feed.shown_search_reader)
        self.first_page.applied.connect(self._reselect_detail)  # a query's rows came from the worker
        self.model.modelReset.connect(self.place_detail)  # (after the columns fit the new rows)
        self.model.rows_arrived.connect(
            lambda _n: self.place_detail()
        )  # (after they grew for them: once at most)
        self._restore_layout()

    # -- setup -------------------------------------------------------------------------------------------
    def _restore_layout(self) -> None:
        window_state.restore_layout(self, self._state)

    def save_layout(self) -> None:
        window_state.save_layout(self, self._state)

    def restore_filter(self) -> None:
        window_state.restore_filter(self, self._state)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.place_detail()

    def place_detail(self) -> None:
        """The detail pane beside the table when the table keeps the room its columns need there (the summary's
        sentence and the whole event ID), else under it: decided by the columns this tenant's rows have, on each
        resize, each new set of rows and each arrival (columns only widen as rows come, so a window that fills
        turns it at most once; a window just as wide may need it below for another tenant)."""
        if not hasattr(self, "entities"):  # a resize while the window is being built
            return
        room = self.width() - DETAIL_BESIDE_MIN - 2 * self.splitter.handleWidth() - 16  # the layout's margins
        below = room < self.columns.wanted_width()
        wanted = Qt.Orientation.Vertical if below else Qt.Orientation.Horizontal
        if self.splitter.orientation() != wanted:
            self.splitter.setOrientation(wanted)
            total = self.height() if below else self.width()
            self.splitter.setSizes([total * 2 // 3, total // 3] if below else [room, DETAIL_BESIDE_MIN])
            self.entities.timelines.follow_orientation()  # the timeline pane goes with the detail pane

    # -- tenants and their data: the feed's, kept here for the app and the window's helpers -----------------
    @property
    def tenant(self) -> str | None:
        return self.feed.tenant

    @tenant.setter
    def tenant(self, name: str | None) -> None:
        self.feed.tenant = name

    @property
    def ui_readers(self) -> dict[str, TenantReader]:
        return self.feed.ui_readers

    @property
    def _tasks(self) -> TaskSet:
        return self.feed.tasks

    def add_tenant(
        self,
        name: str,
        ui_reader: TenantReader,
        worker_reader: TenantReader | None = None,
        search_reader: TenantReader | None = None,
    ) -> None:
        self.feed.add_tenant(name, ui_reader, worker_reader, search_reader)

    def set_tenant_domain(self, name: str, domain: str) -> None:
        """The profile's domain, for "Open in dashboard" (view/dashboard.py decides if it has one)."""
        self.events.domains[name] = domain

    def remove_tenant(self, name: str) -> None:
        self.feed.remove_tenant(name)

    def show_tenant(self, name: str) -> None:
        self.feed.show_tenant(name)

    def set_status(self, status: TenantStatus) -> None:
        self.feed.set_status(status)

    def apply_filter_now(self, flt: EventFilter) -> None:
        self.feed.apply_filter_now(flt)

    def apply_filter(self) -> None:
        self.feed.apply_filter_now(self.filter_bar.current())
        self._reselect_detail()

    def events_stored(self, rows: CommittedRows) -> None:
        """A commit made `rows` visible in their tenant's store; the feed reads the new head itself."""
        self.feed.events_stored(rows.tenant)
        self.entities.events_stored(rows.tenant)
        self.access.events_stored(rows.tenant)

    def schedule_aggregates(self, now: bool = False) -> None:
        self.feed.schedule_aggregates(now)

    async def shutdown(self) -> None:
        """Stop background queries before the app closes the readers."""
        await self.feed.shutdown()
        await stop_background_reads()
        self.entities.close()
        self.access.close()

    def set_paused(self, paused: bool) -> None:
        self.pause_action.blockSignals(True)
        self.pause_action.setChecked(paused)
        self.pause_action.blockSignals(False)

    # -- selection ---------------------------------------------------------------------------------------
    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        ev = self.model.event_at(current.row()) if current.isValid() else None
        self.events.show_detail(ev)

    def _reselect_detail(self) -> None:
        event_selection.reselect_detail(self)

    def select_event(self, tenant: str, seq: int) -> asyncio.Task[None] | None:
        """Open the window on one event (a notification was clicked); clears filters that hide it. Read on a read
        thread: the task that reads it, then selects its row (event_selection.py)."""
        return event_selection.select_event(self, tenant, seq)

    def step(self, delta: int) -> None:
        event_selection.step(self, delta)

    # -- the Events and Access tabs ------------------------------------------------------------------------
    def show_events(self) -> None:
        self.pages.setCurrentIndex(0)

    def show_access(self) -> None:
        self.access.show()

    def export_access_review(self) -> None:
        self.access.export()

    def confirm(self, text: str) -> None:
        self.events.confirm(text)

    def keep_task(self, task: asyncio.Task[Any]) -> None:
        self.feed.keep_task(task)

    # -- unread: rows not yet on screen (follow.py) -----------------------------------------------------
    @property
    def unread(self) -> int:
        return self.follow.count

    def _unread_updated(self) -> None:
        self.setWindowTitle(f"Tenant Events ({self.unread:,} new)" if self.unread else "Tenant Events")
        self.unread_changed.emit(self.unread)

    def show_rejected(self) -> None:
        if self.tenant is None:
            return
        dialog = RejectedDialog(self.tenant, self.ui_readers[self.tenant].rejected(), self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()

    # -- window --------------------------------------------------------------------------------------------
    def changeEvent(self, event: QEvent) -> None:
        """Activated with no widget of its own focused: the keyboard goes to the events (Qt would pick the first
        field of the Tab order, the filter bar's, where N and F type letters into a filter)."""
        if (
            event.type() == QEvent.Type.ActivationChange
            and self.isActiveWindow()
            and self.focusWidget() is None
        ):
            self.table.setFocus(Qt.FocusReason.ActiveWindowFocusReason)
        super().changeEvent(event)

    def take_focus_back(self, widget: QWidget | None) -> None:
        """A dialog of the window closed: the window active again (with no window manager nobody else hands it
        back) and the keyboard where it was before (`widget`), else on the events. Never back into a text field
        such as the search box: the query there has run, and N, F, J and K typed after a dialog are the window's
        keys, not letters of a new filter."""
        try:
            keep = (
                widget is not None
                and widget.isVisible()
                and self.isAncestorOf(widget)
                and not isinstance(widget, QLineEdit | QPlainTextEdit | QTextEdit)
            )
        except RuntimeError:  # deleted meanwhile (its pane closed)
            keep = False
        target = widget if keep and widget is not None else self.table
        if not self.isActiveWindow():
            self.activateWindow()
        target.setFocus(Qt.FocusReason.OtherFocusReason)

    def bring_to_front(self) -> None:
        self.showNormal()
        self.raise_()
        self.activateWindow()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.save_layout()
        if self.keep_in_tray:
            event.ignore()
            self.hide()
            self.closed_to_tray.emit()
        else:
            event.accept()
            self.quit_requested.emit()
