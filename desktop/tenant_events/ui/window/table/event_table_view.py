"""The events table as a widget: whole rows selected one at a time, row heights fixed to one text line, and
scrolling by whole rows (follow.py counts rows to keep the newest in view). The model sets what it shows."""

from __future__ import annotations

from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView

from tenant_events.ui.window.table.event_table_model import EventTableModel


def event_table_view(model: EventTableModel) -> QTableView:
    table = QTableView()
    table.setModel(model)
    model.modelReset.connect(table.clearSpans)  # gap rows (and their spans) go with a reload
    table.setAccessibleName("Events")
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerItem)  # follow.py counts rows
    table.setWordWrap(False)
    header = table.verticalHeader()
    header.setVisible(False)
    header.setDefaultSectionSize(table.fontMetrics().height() + 6)
    header.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
    return table
