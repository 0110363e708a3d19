"""The selected event: highlighted JSON, copy as JSON or as one JSONL line, and a dashboard link."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication, QResizeEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QTextBrowser, QVBoxLayout, QWidget

from tenant_events.ui.look.link_label import LinkLabel
from tenant_events.ui.look.theme import is_dark, json_colors
from tenant_events.values.events import StoredEvent
from tenant_events.view.event_text import jsonl_line

Changes = str | Callable[[bool], str]
READING = "Reading the event…"
_TOKEN = re.compile(r'("(?:\\.|[^"\\])*")(\s*:)?|\b(true|false|null)\b|(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)')


def highlight_json(text: str, dark: bool) -> str:
    """JSON as HTML with keys, strings and literals coloured; everything escaped."""
    key, string, lit = json_colors(dark)
    out: list[str] = []
    pos = 0
    for m in _TOKEN.finditer(text):
        out.append(html.escape(text[pos : m.start()]))
        if m.group(1):
            colour = key if m.group(2) else string
            out.append(f'<span style="color:{colour}">{html.escape(m.group(1))}</span>{m.group(2) or ""}')
        else:
            out.append(f'<span style="color:{lit}">{html.escape(m.group(0))}</span>')
        pos = m.end()
    out.append(html.escape(text[pos:]))
    return "<pre style='margin:0'>" + "".join(out) + "</pre>"


class DetailPane(QWidget):
    copied = Signal(str)  # "json" | "jsonl"
    emptied = Signal()  # no event shown any more: what is drawn beside the pane for one goes too

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.shown: StoredEvent | None = None
        self.pretty = ""
        self.title = QLabel("Select an event to see its JSON.")
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        self.title.setMinimumWidth(10)  # elided to the pane's width, never widening it
        self.browser = QTextBrowser()
        self.browser.setAccessibleName("Event JSON")
        self.browser.setOpenExternalLinks(True)
        self.changes: Changes = ""  # "What changed" above the JSON (HTML, or its maker per theme)
        self.link = LinkLabel()
        self.link.setOpenExternalLinks(True)
        self.link.setAccessibleName("Open in dashboard")
        self.copy_button = QPushButton("&Copy event")
        self.copy_button.setAccessibleName("Copy event as JSON")
        self.copy_jsonl_button = QPushButton("Copy as JSON&L")
        self.copy_jsonl_button.setAccessibleName("Copy event as a JSONL line")
        self._reading = QTimer(self)  # a read not answered yet: says so once it has taken a moment
        self._reading.setSingleShot(True)
        self._reading_line = READING
        self._reading.timeout.connect(lambda: self.browser.setPlainText(self._reading_line))
        self.copy_button.clicked.connect(self.copy_json)
        self.copy_jsonl_button.clicked.connect(self.copy_jsonl)
        buttons = QHBoxLayout()
        buttons.addWidget(self.copy_button)
        buttons.addWidget(self.copy_jsonl_button)
        buttons.addStretch(1)
        buttons.addWidget(self.link)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.browser, 1)
        layout.addLayout(buttons)
        self.show_event(None)

    def show_event(
        self,
        ev: StoredEvent | None,
        dashboard_url: str | None = None,
        changes: Changes = "",
        summary: str | None = None,
    ) -> None:
        """`changes`: the "What changed" HTML of an update (update_diff_view.py), shown above the JSON; given as
        a function of the theme (dark or not), it is made again when the theme changes. `summary`: the event's
        sentence with the directory's names (the stored one, with raw ids, when not known yet)."""
        self._reading.stop()
        self.shown = ev
        has = ev is not None and ev.raw is not None
        self.copy_button.setEnabled(has)
        self.copy_jsonl_button.setEnabled(has)
        if ev is None or ev.raw is None:
            self._empty()
            if ev is None:
                self.emptied.emit()
            return
        self.pretty = json.dumps(self._message(ev), indent=2, ensure_ascii=False)
        self.changes = changes
        self._title(f"{ev.type} — {summary or ev.summary}")
        self._show_json()
        if dashboard_url:
            self.link.setText(f'<a href="{html.escape(dashboard_url)}">Open in dashboard</a>')
        else:
            self.link.clear()

    def show_reading(self, ev: StoredEvent, summary: str, line: str = READING, after_ms: int = 0) -> None:
        """`ev` chosen, its JSON not shown yet (being read: event_actions.py): its title, and `line` saying why —
        only once `after_ms` have passed without its JSON (a live row's comes in a frame or two: no flash of the
        line). Meanwhile the title alone: no JSON, no link, no copy of the event shown before."""
        self._reading.stop()
        self._empty()
        self.shown = ev
        self._title(f"{ev.type} — {summary}")
        self._reading_line = line
        if after_ms:
            self._reading.start(after_ms)
        else:
            self.browser.setPlainText(line)

    def _empty(self) -> None:
        self.copy_button.setEnabled(False)
        self.copy_jsonl_button.setEnabled(False)
        self.pretty = ""
        self.title.setText("Select an event to see its JSON.")
        self.browser.clear()
        self.link.clear()

    def name_summary(self, seq: int, summary: str) -> None:
        """The names of the shown event arrived (a burst's rows are named a moment after they are stored)."""
        if self.shown is not None and self.shown.seq == seq:
            self._title(f"{self.shown.type} — {summary}")

    def _title(self, full: str) -> None:
        self.title.setToolTip(full)
        self.title.setText(
            self.title.fontMetrics().elidedText(full, Qt.TextElideMode.ElideRight, self.width() - 8)
        )

    def resizeEvent(self, event: QResizeEvent) -> None:
        """The title is elided to the pane's width: again when the width changes (a timeline opened beside it)."""
        super().resizeEvent(event)
        if self.shown is not None and self.title.toolTip():
            metrics = self.title.fontMetrics()
            self.title.setText(
                metrics.elidedText(self.title.toolTip(), Qt.TextElideMode.ElideRight, self.width() - 8)
            )

    def changeEvent(self, event: QEvent) -> None:
        """A theme switch repaints the JSON in the new theme's colours (light ones on a dark base are ~2:1), and
        keeps an update's "What changed" above it."""
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange) and self.pretty:
            self._show_json()

    def _show_json(self) -> None:
        dark = is_dark()
        changes = self.changes(dark) if callable(self.changes) else self.changes
        self.browser.setHtml(changes + highlight_json(self.pretty, dark))

    @staticmethod
    def _message(ev: StoredEvent) -> Any:
        try:
            return json.loads(ev.raw or "null")
        except ValueError:
            return ev.raw

    def copy_json(self) -> None:
        if self.pretty:
            QGuiApplication.clipboard().setText(self.pretty)
            self.copied.emit("json")

    def copy_jsonl(self) -> None:
        if self.shown is not None and self.shown.raw is not None:
            ev = self.shown
            QGuiApplication.clipboard().setText(jsonl_line(ev.type, ev.offset, ev.raw or ""))
            self.copied.emit("jsonl")
