"""The table's columns: sized to their content, Tenant and Purpose shown only when they say something, and
whatever the user chose (a width dragged, a column shown or hidden, the order) kept in the window state.

Automatic rules apply only where the user has not chosen: a column the user resized keeps its width, one the user
showed or hid from the header menu stays that way. Summary takes the rest of the width. Type is as wide as the
type names in the rows (widening as rows arrive, never narrowing under the reader); Purpose as its title. The
event ID always shows: when the window (or a pane beside the table) leaves the summary less than ROOMY_SUMMARY,
it narrows to its start (elided; the detail pane has it whole) and widens again when the room comes back.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QByteArray, QEvent, QObject, QPoint, QSettings, Qt
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QHeaderView, QMenu, QTableView

from tenant_events.ui.window.table.event_table_model import HEADERS, Col, EventTableModel, local_time
from tenant_events.wire import EventType

PADDING = 18  # the cell's margins, plus a little air
SAMPLE_ROWS = 256  # rows looked at for content widths: the first page, already in memory
GROW_ROWS = 64  # of a batch of new rows, the ones looked at (about the screen's worth at the top)
ROOMY_SUMMARY = (
    300  # below this much room for the summary, the event ID (also in the detail pane) steps aside
)
ID_MIN = 84  # px: "evt_1a2b…", enough to tell rows apart at a glance
SUMMARY_WANTS = 460  # px: the room a summary sentence needs to read whole in most rows (names and all)
_TIME_SAMPLES = ("23:59:59", "2026-12-31 23:59:59")


class ColumnLayout:
    """Applies the sizing rules to one table and remembers the user's choices in `state` (window.ini)."""

    def __init__(self, table: QTableView, model: EventTableModel, state: QSettings) -> None:
        self.table, self.model, self.state = table, model, state
        self.user_widths: dict[str, int] = {}
        self.user_shown: dict[str, bool] = {}
        self.tenants = 1
        self.has_purpose = False
        self._sizing = False
        self._widths: dict[Col, int] = {}  # what fit() gave each column
        self._type_widths: dict[str, int] = {}  # type name → its width, bold, in `_type_font`
        self._type_font = ""
        header = table.horizontalHeader()
        header.setSectionsMovable(True)
        header.setStretchLastSection(False)
        header.setMinimumSectionSize(40)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(Col.SUMMARY, QHeaderView.ResizeMode.Stretch)
        header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        header.customContextMenuRequested.connect(self._header_menu)
        header.sectionResized.connect(self._resized)
        table.viewport().installEventFilter(_OnResize(table.viewport(), self.apply_visibility))
        model.modelReset.connect(self.fit)
        model.rows_arrived.connect(self.grow)

    # -- rules ---------------------------------------------------------------------------------------------
    def set_tenant_count(self, n: int) -> None:
        if n != self.tenants:
            self.tenants = n
            self.fit()  # the tenant column is measured only when there is more than one

    def set_has_purpose(self, has: bool) -> None:
        if has != self.has_purpose:
            self.has_purpose = has
            self.apply_visibility()

    def auto_visible(self, col: Col) -> bool:
        if col == Col.TENANT:
            return self.tenants > 1
        if col == Col.PURPOSE:
            return self.has_purpose
        return True

    def _summary_room(self, without: Col) -> int:
        """Pixels left for the summary with the other shown columns at their widths (`without` left out)."""
        others = sum(
            self._width(c)
            for c in Col
            if c not in (Col.SUMMARY, without) and self.user_shown.get(c.name, self._rule(c))
        )
        return self.table.viewport().width() - others

    def wanted_width(self) -> int:
        """The table's width with every shown column whole and SUMMARY_WANTS for the summary (frame and scroll bar
        included): narrower than this, a pane beside the table cuts the summary and the event ID."""
        shown = [c for c in Col if c != Col.SUMMARY and self.user_shown.get(c.name, self.auto_visible(c))]
        columns = sum(self._widths.get(c) or self.content_width(c) for c in shown)
        chrome = self.table.verticalScrollBar().sizeHint().width() + 2 * self.table.frameWidth()
        return columns + SUMMARY_WANTS + chrome

    def _width(self, col: Col) -> int:
        """The column's width when shown (a hidden section reports 0)."""
        return self._widths.get(col, 0) or self.table.columnWidth(col)

    def _rule(self, col: Col) -> bool:
        return col != Col.ID and self.auto_visible(col)

    def apply_visibility(self) -> None:
        for col in Col:
            shown = self.user_shown.get(col.name, self.auto_visible(col))
            self.table.setColumnHidden(col, not shown)
        self._fit_id()

    def _fit_id(self) -> None:
        """The event ID's width for the room there is: whole when the summary keeps ROOMY_SUMMARY, else down to
        ID_MIN (elided); it follows the window and panes both ways."""
        if Col.ID.name in self.user_widths or self.table.isColumnHidden(Col.ID):
            return
        whole = self._widths.get(Col.ID) or self.content_width(Col.ID)
        spare = self._summary_room(without=Col.ID) - ROOMY_SUMMARY
        width = max(min(whole, spare), min(whole, ID_MIN))
        if self.table.columnWidth(Col.ID) != width:
            self._sizing = True
            try:
                self.table.setColumnWidth(Col.ID, width)
            finally:
                self._sizing = False

    def content_width(self, col: Col, rows: int = SAMPLE_ROWS) -> int:
        """Widest text this column shows in its first `rows` rows (header included), in pixels.

        Type and Purpose have a fixed set of values (no rows read); Time has two forms; Tenant and ID are measured
        on the rows, read straight from the model's cached page (this runs on every reload and batch).
        """
        fm = QFontMetrics(self.table.font())
        header_fm = QFontMetrics(self.table.horizontalHeader().font())
        widest = header_fm.horizontalAdvance(HEADERS[col]) + 8  # the sort/section padding of the header
        if col == Col.TYPE:  # the names in the rows (deleted/removed ones are bold)
            widest = max(widest, self._type_width(rows))
        elif col == Col.PURPOSE:
            widest = max(widest, fm.horizontalAdvance("test"))
        elif col == Col.TIME:
            widest = max(widest, *(fm.horizontalAdvance(t) for t in _TIME_SAMPLES[: self._time_forms(rows)]))
        elif (col == Col.TENANT and self.tenants > 1) or col == Col.ID:
            values = set()
            for row in range(min(self.model.rowCount(), rows)):
                ev = self.model.event_at(row)
                if ev is not None:
                    values.add(ev.event_id if col == Col.ID else ev.tenant)
            widest = max(widest, *(fm.horizontalAdvance(v) for v in values)) if values else widest
        return widest + PADDING

    def _type_width(self, rows: int) -> int:
        """The widest type name among the first `rows` rows (bold, as deleted/removed ones are drawn)."""
        key = self.table.font().key()
        if key != self._type_font:
            bold = QFont(self.table.font())
            bold.setBold(True)
            bfm = QFontMetrics(bold)
            self._type_font = key
            self._type_widths = {t.value: bfm.horizontalAdvance(t.value) for t in EventType}
        types = set()
        for row in range(min(self.model.rowCount(), rows)):
            ev = self.model.event_at(row)
            if ev is not None:
                types.add(ev.type)
        return max((self._type_widths.get(t, 0) for t in types), default=0)

    def _time_forms(self, rows: int) -> int:
        """1 if the sampled times are today's (shown as HH:MM:SS), 2 if a date shows too. Rows are newest first,
        so the first and the last sampled row tell."""
        last = min(self.model.rowCount(), rows) - 1
        for row in {0, last} if last >= 0 else set():
            ev = self.model.event_at(row)
            if ev is not None and len(local_time(ev.time)) > 8:
                return 2
        return 1

    def fit(self) -> None:
        """Size every column the user has not sized to its content; show or hide per the rules."""
        self._sizing = True
        try:
            for col in Col:
                if col == Col.SUMMARY:
                    continue
                width = self.user_widths.get(col.name) or self.content_width(col)
                self._widths[col] = width
                if self.table.columnWidth(col) != width:
                    self.table.setColumnWidth(col, width)
        finally:
            self._sizing = False
        self.apply_visibility()

    def grow(self, arrived: int) -> None:
        """New rows at the top: widen a column whose new content is wider (never narrow it under the reader)."""
        self._sizing = True
        try:
            for col in (Col.TIME, Col.TYPE, Col.TENANT, Col.ID):
                if col.name in self.user_widths or self.table.isColumnHidden(col):
                    continue
                width = self.content_width(col, min(arrived, GROW_ROWS))
                if width > self._widths.get(col, 0):
                    self._widths[col] = width
                    self.table.setColumnWidth(col, width)
        finally:
            self._sizing = False
        self._fit_id()

    def _resized(self, logical: int, _old: int, new: int) -> None:
        if self._sizing or logical == Col.SUMMARY or not 0 <= logical < len(Col) or new <= 0:
            return
        header = self.table.horizontalHeader()
        if header.isSectionHidden(logical):
            return
        self.user_widths[Col(logical).name] = new  # a drag (or a double-click fit) by the user
        self._widths[Col(logical)] = new
        self.save()

    # -- the header menu (right-click on a column title, or from View ▸ Columns) -----------------------------
    def fill_menu(self, menu: QMenu) -> None:
        for col in Col:
            act = menu.addAction(HEADERS[col])
            act.setCheckable(True)
            act.setChecked(not self.table.isColumnHidden(col))
            act.setEnabled(col != Col.SUMMARY)  # the summary always shows: it is what the row is about
            act.toggled.connect(lambda on, c=col: self.choose(c, on))
        menu.addSeparator()
        menu.addAction("Fit columns to content", self.reset_widths)
        menu.addAction("Reset columns", self.reset)

    def _header_menu(self, pos: QPoint) -> None:
        menu = QMenu(self.table)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        menu.setAccessibleName("Columns")
        self.fill_menu(menu)
        menu.popup(self.table.horizontalHeader().mapToGlobal(pos))

    def choose(self, col: Col, shown: bool) -> None:
        """The user showed or hid `col`: kept over the automatic rule from now on."""
        self.user_shown[col.name] = shown
        self.apply_visibility()
        self.save()

    def reset_widths(self) -> None:
        self.user_widths.clear()
        self.fit()
        self.save()

    def reset(self) -> None:
        """Back to the automatic layout: content widths, original order, rule-based visibility."""
        self.user_widths.clear()
        self.user_shown.clear()
        header = self.table.horizontalHeader()
        for col in Col:
            header.moveSection(header.visualIndex(col), col)
        self.fit()
        self.save()

    # -- persistence (window state, not settings) -----------------------------------------------
    def save(self) -> None:
        self.state.setValue("table/header", self.table.horizontalHeader().saveState())
        self.state.setValue("table/user_widths", json.dumps(self.user_widths))
        self.state.setValue("table/user_shown", json.dumps(self.user_shown))

    def restore(self) -> None:
        header_state = self.state.value("table/header")
        if isinstance(header_state, QByteArray) and not header_state.isEmpty():
            self._sizing = True
            try:
                self.table.horizontalHeader().restoreState(header_state)
            finally:
                self._sizing = False
        self.user_widths = _load(self.state.value("table/user_widths"), int)
        self.user_shown = _load(self.state.value("table/user_shown"), bool)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(Col.SUMMARY, QHeaderView.ResizeMode.Stretch)
        self.fit()


class _OnResize(QObject):
    """Calls back when the watched widget is resized (the table's width decides whether the ID column fits)."""

    def __init__(self, watched: QObject, callback: Callable[[], None]) -> None:
        super().__init__(watched)
        self.callback = callback

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize:
            self.callback()
        return False


def _load(value: Any, kind: type[int] | type[bool]) -> dict[str, Any]:
    """A {column name: value} map from the state file; anything malformed is dropped, not trusted."""
    try:
        raw = json.loads(str(value or "{}"))
    except ValueError:
        return {}
    if not isinstance(raw, dict):
        return {}
    names = {c.name for c in Col}
    return {k: v for k, v in raw.items() if k in names and type(v) is kind}
