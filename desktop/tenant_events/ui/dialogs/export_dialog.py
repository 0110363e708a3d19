"""File ▸ Export view…: the current filtered view to a JSONL or CSV file, with progress and Cancel.

The export runs on a worker thread (view/filtered_export.py) over the tenant's worker reader; the UI thread only
polls a counter for the progress dialog. The window never reads the database itself here (ui/ holds no SQL).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QFileDialog, QProgressDialog, QWidget

from tenant_events.entities.sentences import export_summaries
from tenant_events.errors import UserFixableError
from tenant_events.values.events import EventFilter
from tenant_events.view.filtered_export import ExportCancelled, export_view, format_for
from tenant_events.view.tenant_reader import TenantReader

log = logging.getLogger(__name__)
SHOW_PROGRESS_FROM = 5000  # rows: smaller exports finish before a dialog would be worth showing
POLL_MS = 100


def save_dialog(
    parent: QWidget, title: str, suggested: Path, filters: dict[str, str], chosen: Callable[[Path], object]
) -> QFileDialog:
    """A save dialog, open and not blocking: `filters` are {name filter: its suffix}, the first one the default;
    `chosen(path)` when a file is picked. It deletes itself when closed."""
    dialog = QFileDialog(parent, title, str(suggested))
    dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
    dialog.setNameFilters(list(filters))
    dialog.setDefaultSuffix(next(iter(filters.values())))
    dialog.filterSelected.connect(lambda f: dialog.setDefaultSuffix(filters.get(f, "")))
    dialog.fileSelected.connect(lambda path: chosen(Path(path)))
    dialog.finished.connect(lambda _r: dialog.deleteLater())
    dialog.open()
    return dialog


class ExportHost(Protocol):
    def export_source(self) -> tuple[str, TenantReader] | None: ...
    def confirm(self, text: str) -> None: ...
    def keep_task(self, task: asyncio.Task[Any]) -> None: ...


class ViewExport(QObject):
    finished = Signal(object)  # the row count, or an error text

    def __init__(self, window: QWidget, host: ExportHost) -> None:
        super().__init__(window)
        self.window, self.host = window, host
        self.file_dialog: QFileDialog | None = None
        self.progress: QProgressDialog | None = None
        self._done = 0
        self._cancel = False
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._poll)

    def ask(self, flt: EventFilter, head: int, rows: int) -> QFileDialog:
        """The save dialog (non-blocking); choosing a file starts the export of `flt` up to `head`."""
        source = self.host.export_source()
        name = f"{source[0] if source else 'events'}-events.jsonl"
        self.file_dialog = save_dialog(
            self.window,
            "Export the events shown",
            Path.home() / name,
            {"JSON lines (*.jsonl)": "jsonl", "CSV (*.csv)": "csv"},
            lambda path: self.start(path, flt, head, rows),
        )
        return self.file_dialog

    def start(self, target: Path, flt: EventFilter, head: int, rows: int) -> asyncio.Task[Any] | None:
        source = self.host.export_source()
        if source is None:
            return None
        self._done, self._cancel = 0, False
        if rows >= SHOW_PROGRESS_FROM:
            self.progress = QProgressDialog(f"Exporting {rows:,} events…", "Cancel", 0, rows, self.window)
            self.progress.setWindowTitle("Export")
            self.progress.setWindowModality(Qt.WindowModality.WindowModal)
            self.progress.setMinimumDuration(0)
            self.progress.canceled.connect(self.cancel)
            self.progress.setValue(0)
            self.progress.show()
            self._timer.start()
        task = asyncio.create_task(self._run(source[1], flt, head, target))
        self.host.keep_task(task)
        return task

    def cancel(self) -> None:
        self._cancel = True

    def _progress(self, done: int) -> bool:  # on the worker thread: plain attributes only
        self._done = done
        return not self._cancel

    def _poll(self) -> None:
        if self.progress is not None:
            if self.progress.wasCanceled():
                self._cancel = True
            self.progress.setValue(min(self._done, self.progress.maximum()))

    async def _run(self, reader: TenantReader, flt: EventFilter, head: int, target: Path) -> None:
        fmt = format_for(target)
        try:
            count = await asyncio.to_thread(
                export_view,
                reader,
                flt,
                head,
                target,
                fmt,
                export_summaries(reader.directory()),  # the CSV's summary: the table's sentences
                self._progress,
            )
        except ExportCancelled:
            self._close_progress()
            self.host.confirm("Export cancelled: no file was written")
            self.finished.emit("cancelled")
            return
        except UserFixableError as exc:
            self._close_progress()
            self.host.confirm(f"Not exported: {exc}")
            self.finished.emit(str(exc))
            return
        except OSError as exc:
            self._close_progress()
            text = f"Could not write {target}: {exc.strerror or exc}. Pick another folder or free some space."
            log.info("export failed: %s", text)
            self.host.confirm(text)
            self.finished.emit(text)
            return
        self._close_progress()
        self.host.confirm(f"Exported {count:,} event{'' if count == 1 else 's'} to {target.name}")
        self.finished.emit(count)

    def _close_progress(self) -> None:
        self._timer.stop()
        if self.progress is not None:
            self.progress.reset()
            self.progress.deleteLater()
            self.progress = None
