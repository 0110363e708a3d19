"""File ▸ Export access review…: what the Access view shows, as a printable report (PDF through Qt's own PDF
writer, or HTML) and a CSV beside it with the same name, for auditors.

The page comes from access/report.py; Qt's text engine lays it out on numbered A4 pages (QTextDocument into a QPdfWriter,
no other dependency). Both files are written on a worker thread, each into a temporary file renamed over the
target at the end, so a failed export leaves no half file.
"""

from __future__ import annotations

import asyncio
import logging
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, Protocol

from PySide6.QtCore import QMarginsF, QObject, Signal
from PySide6.QtGui import QPageLayout, QPageSize, QPdfWriter, QTextDocument
from PySide6.QtWidgets import QFileDialog, QWidget

from tenant_events import APP_NAME
from tenant_events.access.filters import AccessFilter
from tenant_events.access.records import Diff, Snapshot
from tenant_events.access.report import report_html
from tenant_events.access.rows import write_csv
from tenant_events.ui.dialogs.export_dialog import save_dialog

log = logging.getLogger(__name__)


class ReportHost(Protocol):
    def confirm(self, text: str) -> None: ...
    def keep_task(self, task: asyncio.Task[Any]) -> None: ...


def _replace(target: Path, write: Callable[[Path], object]) -> None:
    """`write(temp)` then rename it over `target`; the temp file goes when anything fails."""
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    os.close(fd)
    temp = Path(name)
    try:
        write(temp)
        os.replace(temp, target)
    finally:
        temp.unlink(missing_ok=True)


_PRINTABLE: Final = (".pdf", ".html", ".htm")
PRINT_MARGIN_MM: Final = 20.0  # QTextDocument.print_ keeps 2 cm round the text and puts the page number in it


def page_layout(answer: Snapshot | Diff) -> QPageLayout:
    """A4, portrait for a moment's lists, landscape for the changes' five columns (portrait broke every address
    and event id in two). No margin of the writer's own: print_ adds its 2 cm."""
    landscape = isinstance(answer, Diff)
    return QPageLayout(
        QPageSize(QPageSize.PageSizeId.A4),
        QPageLayout.Orientation.Landscape if landscape else QPageLayout.Orientation.Portrait,
        QMarginsF(0, 0, 0, 0),
        QPageLayout.Unit.Millimeter,
    )


def text_area_mm(answer: Snapshot | Diff) -> tuple[float, float]:
    """Width and height of the text on each page of the PDF."""
    rect = page_layout(answer).paintRect(QPageLayout.Unit.Millimeter)
    return rect.width() - 2 * PRINT_MARGIN_MM, rect.height() - 2 * PRINT_MARGIN_MM


def _write_pdf(page: str, path: Path, title: str, answer: Snapshot | Diff) -> None:
    writer = QPdfWriter(str(path))
    writer.setPageLayout(page_layout(answer))
    writer.setTitle(title)
    writer.setCreator(APP_NAME)
    document = QTextDocument()
    document.setHtml(page)
    document.print_(writer)  # lays it out on the writer's pages, numbered


def report_paths(chosen: Path) -> tuple[Path, Path]:
    """The printable file and its CSV for the name picked in the save dialog. A name not ending in .pdf or .html
    (a suffix typed over the dialog's) gets .html added: a report never replaces a file of another kind, a
    tenant's database picked by mistake least of all."""
    printable = chosen if chosen.suffix.lower() in _PRINTABLE else chosen.with_name(chosen.name + ".html")
    return printable, printable.with_suffix(".csv")


def write_report(answer: Snapshot | Diff, flt: AccessFilter, chosen: Path) -> tuple[Path, Path]:
    """The report (PDF or HTML, by the suffix) and its CSV (same name, .csv); blocking."""
    page = report_html(answer, flt)
    printable, sheet = report_paths(chosen)
    if printable.suffix.lower() == ".pdf":
        _replace(printable, lambda temp: _write_pdf(page, temp, f"Access review — {answer.tenant}", answer))
    else:
        _replace(printable, lambda temp: temp.write_text(page, encoding="utf-8"))

    def csv_file(temp: Path) -> None:
        with temp.open("w", encoding="utf-8", newline="") as out:
            write_csv(answer, out)

    _replace(sheet, csv_file)
    return printable, sheet


class ReportExport(QObject):
    finished = Signal(object)  # the files written, or an error text

    def __init__(self, window: QWidget, host: ReportHost) -> None:
        super().__init__(window)
        self.window, self.host = window, host
        self.file_dialog: QFileDialog | None = None

    def ask(self, answer: Snapshot | Diff, flt: AccessFilter) -> QFileDialog:
        """The save dialog (non-blocking); choosing a file writes the report of `answer` there."""
        when = "now" if isinstance(answer, Snapshot) and answer.at_ms is None else "review"
        name = f"{answer.tenant}-access-{'changes' if isinstance(answer, Diff) else when}.pdf"
        self.file_dialog = save_dialog(
            self.window,
            "Export access review",
            Path.home() / name,
            {"PDF (*.pdf)": "pdf", "HTML page (*.html)": "html"},
            lambda path: self.start(answer, flt, path),
        )
        return self.file_dialog

    def start(self, answer: Snapshot | Diff, flt: AccessFilter, target: Path) -> asyncio.Task[None]:
        task = asyncio.ensure_future(self._run(answer, flt, target))
        self.host.keep_task(task)
        return task

    async def _run(self, answer: Snapshot | Diff, flt: AccessFilter, target: Path) -> None:
        try:
            printable, sheet = await asyncio.to_thread(write_report, answer, flt, target)
        except OSError as exc:
            text = f"Could not write {target}: {exc.strerror or exc}. Pick another folder or free some space."
            log.info("access review export failed: %s", text)
            self.host.confirm(text)
            self.finished.emit(text)
            return
        self.host.confirm(f"Wrote {printable.name} and {sheet.name}")
        self.finished.emit((printable, sheet))
