"""The timeline pane's rows: an object's events newest first, read a page at a time as the list scrolls.

`fetchMore` only asks (`more_wanted`); the controller reads the next page on a worker thread and hands the rows
to `append`, so scrolling never reads the store on the UI thread.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from tenant_events.entities.page_names import mention_lines
from tenant_events.entities.timeline_pages import TimelineRow
from tenant_events.ui.look.theme import family_color, is_dark, tenant_color
from tenant_events.ui.window.paged_rows import Index, PagedRowsModel
from tenant_events.ui.window.table.event_table_model import SENTENCE_ROLE, local_time, utc_tooltip


class TimelineCol(IntEnum):
    TIME = 0
    TENANT = 1
    TYPE = 2
    WHAT = 3


HEADERS = {
    TimelineCol.TIME: "Time",
    TimelineCol.TENANT: "Tenant",
    TimelineCol.TYPE: "Type",
    TimelineCol.WHAT: "What happened",
}


class TimelineModel(PagedRowsModel[TimelineRow]):
    COLUMNS = len(TimelineCol)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return HEADERS.get(TimelineCol(section)) if 0 <= section < len(TimelineCol) else None
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        item = self.row_at(index.row()) if index.isValid() else None
        if item is None or index.column() >= len(TimelineCol):
            return None
        col, ev = TimelineCol(index.column()), item.event
        if role == Qt.ItemDataRole.DisplayRole:
            return {
                TimelineCol.TIME: local_time(ev.time),
                TimelineCol.TENANT: item.tenant,
                TimelineCol.TYPE: ev.type,
                TimelineCol.WHAT: item.sentence.text,
            }[col]
        if role == Qt.ItemDataRole.ToolTipRole:
            if col == TimelineCol.TIME:
                return utc_tooltip(ev.time)
            if col == TimelineCol.WHAT:
                return "\n".join([item.sentence.text, *mention_lines(item.sentence)])
            return self.data(index)
        if role == SENTENCE_ROLE and col == TimelineCol.WHAT:
            return item.sentence
        if role == Qt.ItemDataRole.ForegroundRole and col == TimelineCol.TYPE:
            return QColor(family_color(ev.family, is_dark()))
        if role == Qt.ItemDataRole.ForegroundRole and col == TimelineCol.TENANT:
            return tenant_color(item.tenant)
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return f"{local_time(ev.time)}, {ev.type}, {item.sentence.text}"
        return None
