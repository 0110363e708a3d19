"""The "All tenants" table: every tenant's events by event time, newest first, a page at a time as it scrolls.

Rows come from entities/all_tenants_pages.py, read on a worker: `fetchMore` only asks (`more_wanted`) and the
controller appends what it read; live arrivals are put on top with one insert. Same columns as the per-tenant
table; the Tenant column shows the tenant's colour chip and the store's name (the profile), not the envelope's.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QColor, QFont, QPixmap

from tenant_events.entities.all_tenants_pages import AllTenantsRow
from tenant_events.entities.page_names import mention_lines
from tenant_events.ui.look.theme import family_color, is_dark, stripe, tenant_chip, tenant_color
from tenant_events.ui.window.paged_rows import Index, PagedRowsModel
from tenant_events.ui.window.table.event_table_model import (
    EVENT_ROLE,
    HEADERS,
    SENTENCE_ROLE,
    SEQ_ROLE,
    Col,
    local_time,
    utc_tooltip,
)

TENANT_ROLE = Qt.ItemDataRole.UserRole + 4


class AllTenantsTableModel(PagedRowsModel[AllTenantsRow]):
    COLUMNS = len(Col)

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._bold = QFont()
        self._bold.setBold(True)
        self._chips: dict[tuple[str, str], QPixmap] = {}
        self._on_top = 0  # rows put on top so far: each row keeps its stripe (theme.stripe)

    def prepend(self, rows: list[AllTenantsRow]) -> None:
        """Newer rows (newest first) go on top in one insert; the selection keeps its row's identity."""
        if rows:
            self.beginInsertRows(QModelIndex(), 0, len(rows) - 1)
            self.rows[:0] = rows
            self._on_top += len(rows)
            self.endInsertRows()

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if (
            orientation == Qt.Orientation.Horizontal
            and role == Qt.ItemDataRole.DisplayRole
            and 0 <= section < len(Col)
        ):
            return HEADERS[Col(section)]
        return None

    def _chip(self, tenant: str) -> QPixmap:
        """The tenant's colour chip, drawn once per tenant and theme (not per paint)."""
        key = (tenant, tenant_color(tenant).name())
        chip = self._chips.get(key)
        if chip is None:
            chip = self._chips[key] = tenant_chip(tenant)
        return chip

    def _text(self, item: AllTenantsRow, col: Col) -> str:
        ev = item.event
        if col == Col.TIME:
            return local_time(ev.time)
        if col == Col.TYPE:
            return ev.type
        if col == Col.SUMMARY:
            return ev.summary if item.sentence is None else item.sentence.text
        if col == Col.TENANT:
            return item.tenant
        if col == Col.PURPOSE:
            return ev.purpose or ""
        return ev.event_id

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        item = self.row_at(index.row()) if index.isValid() else None
        if item is None or index.column() >= len(Col):
            return None
        col, ev = Col(index.column()), item.event
        if role == Qt.ItemDataRole.BackgroundRole:
            return stripe(index.row() - self._on_top)
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(item, col)
        if role == Qt.ItemDataRole.ToolTipRole:
            if col == Col.TIME:
                return utc_tooltip(ev.time)
            if col == Col.SUMMARY and item.sentence is not None and item.sentence.mentions:
                return "\n".join([item.sentence.text, *mention_lines(item.sentence)])
            return self._text(item, col)
        if role == SENTENCE_ROLE:
            return item.sentence
        if role == Qt.ItemDataRole.DecorationRole and col == Col.TENANT:
            return self._chip(item.tenant)
        if role == Qt.ItemDataRole.ForegroundRole and col == Col.TENANT:
            return tenant_color(item.tenant)
        if role == Qt.ItemDataRole.ForegroundRole and col == Col.TYPE:
            return QColor(family_color(ev.family, is_dark()))
        if (
            role == Qt.ItemDataRole.FontRole
            and col == Col.TYPE
            and ev.type.endswith((".deleted", ".removed"))
        ):
            return self._bold
        if role == SEQ_ROLE:
            return ev.seq
        if role == EVENT_ROLE:
            return ev.event_id
        if role == TENANT_ROLE:
            return item.tenant
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return f"{item.tenant}, {ev.type}, {self._text(item, Col.SUMMARY)}, {local_time(ev.time)}"
        return None
