"""Settings ▸ Alert destinations: where alerts are sent (any Apprise URL), what each receives, a test button.

    ┌ destinations ─────────┐ ┌ Name      [ops-pager          ]                                      ┐
    │ ops-pager (critical)  │ │ URL       [••••••••••••••••••] ☐ Show (kept in the keyring; masked)    │
    │ ⚠ chat — stopped: …   │ │           [Send a test alert]  result of the test, under the field     │
    └ [New] [Remove] ───────┘ │ Receives  ☐ info ☑ warning ☑ critical   Rules […]   Tenants […]       │
                              │ ☑ Held back by quiet hours and do-not-disturb          [Save destination] │
                              └──────────────────────────────────────────────────────────────────────────┘

Saving writes at once (the URL goes to the keyring, never to the settings file), independent of the dialog's
OK/Apply; `changed` tells the dialog so its copy of the settings keeps the same list. Every keyring and network
call runs in a thread; a problem is shown under the field it is about.
"""

from __future__ import annotations

import asyncio
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from tenant_events.destinations.editor import DestinationEditor
from tenant_events.errors import ConfigError, UserFixableError
from tenant_events.settings.destinations import SEVERITIES, DestinationProfile
from tenant_events.ui.look.captions import whole_captions


def _printable(text: str) -> str:
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text)


class DestinationsPage(QWidget):
    changed = Signal(object)  # list[DestinationProfile]

    def __init__(self, editor: DestinationEditor | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.editor = editor
        self.profiles: list[DestinationProfile] = []
        self.stops: dict[str, str] = {}
        self._task: asyncio.Future[Any] | None = None
        self._showing = 0  # bumped by each destination shown or begun: a test's later result is not theirs
        self.list = QListWidget()
        self.list.setAccessibleName("Alert destinations")
        self.list.currentRowChanged.connect(self._show)
        self.new_button = QPushButton("&New")
        self.new_button.clicked.connect(self.new_destination)
        self.remove_button = QPushButton("&Remove")
        self.remove_button.clicked.connect(self.remove_destination)
        left = QVBoxLayout()
        left.addWidget(self.list)
        row = QHBoxLayout()
        row.addWidget(self.new_button)
        row.addWidget(self.remove_button)
        left.addLayout(row)

        self.name = QLineEdit()
        self.name.setAccessibleName("Destination name")
        self.name_error = self._error_label()
        self.url = QLineEdit()
        self.url.setEchoMode(QLineEdit.EchoMode.Password)
        self.url.setAccessibleName("Apprise URL")
        # the URL holds a token: masked, but the user may look at what was typed before saving (masked again
        # once saved, and for every destination shown)
        self.show_url = QCheckBox("Sho&w")
        self.show_url.setToolTip("Show the URL as typed, to check it before saving")
        self.show_url.setAccessibleName("Show the URL")
        self.show_url.toggled.connect(self._url_shown)
        self.url_note = QLabel("")
        self.url_note.setWordWrap(True)
        self.url_error = self._error_label()
        self.test_button = QPushButton("Send a &test alert")
        self.test_button.clicked.connect(self.send_test)
        self.test_result = QLabel("")
        self.test_result.setWordWrap(True)
        self.test_result.setAccessibleName("Test result")
        self.severity = {s: QCheckBox(s) for s in SEVERITIES}
        self.rules = QLineEdit()
        self.rules.setPlaceholderText("every rule (or rule ids, comma-separated)")
        self.tenants = QLineEdit()
        self.tenants.setPlaceholderText("every tenant (or profile names, comma-separated)")
        self.held = QCheckBox("Held back by quiet hours and do-not-disturb")
        self.resolved = QCheckBox("Told when an alert is resolved (a pager's incident closes)")
        self.repeat = QSpinBox()
        self.repeat.setRange(0, 10_080)
        self.repeat.setSuffix(" min")
        self.repeat.setSpecialValueText("never")
        self.repeat.setAccessibleName("Repeat unacknowledged critical alerts every")
        self.fields_error = self._error_label()
        self.stopped = self._error_label()
        self.save_button = QPushButton("&Save destination")
        self.save_button.clicked.connect(self.save_destination)

        form = QFormLayout()
        form.addRow("Name", self.name)
        form.addRow("", self.name_error)
        url_row = QHBoxLayout()
        url_row.addWidget(self.url, 1)
        url_row.addWidget(self.show_url)
        form.addRow("URL", url_row)
        form.addRow("", self.url_note)
        form.addRow("", self.url_error)
        test_row = QHBoxLayout()
        test_row.addWidget(self.test_button)
        test_row.addStretch(1)
        form.addRow("", test_row)
        form.addRow("", self.test_result)
        sev_row = QHBoxLayout()
        for box in self.severity.values():
            sev_row.addWidget(box)
        sev_row.addStretch(1)
        form.addRow("Receives", sev_row)
        form.addRow("Rules", self.rules)
        form.addRow("Tenants", self.tenants)
        form.addRow("", self.held)
        form.addRow("", self.resolved)
        form.addRow("Repeat unacknowledged critical alerts every", self.repeat)
        form.addRow("", self.fields_error)
        form.addRow("", self.stopped)
        save_row = QHBoxLayout()
        save_row.addStretch(1)
        save_row.addWidget(self.save_button)
        form.addRow("", save_row)
        layout = QHBoxLayout(self)
        layout.addLayout(left, 1)
        layout.addLayout(whole_captions(form), 2)
        if editor is None:
            self.setEnabled(False)
            self.url_note.setText("Alert destinations need the app's keyring.")
        self.new_destination()

    def _url_shown(self, shown: bool) -> None:
        self.url.setEchoMode(QLineEdit.EchoMode.Normal if shown else QLineEdit.EchoMode.Password)

    def _mask_url(self) -> None:
        """The URL field empty and masked again (saved, or another destination shown)."""
        self.url.clear()
        self.show_url.setChecked(False)

    def _error_label(self) -> QLabel:
        label = QLabel("")
        label.setWordWrap(True)
        label.setStyleSheet("color: palette(link-visited); font-weight: 600")
        label.hide()
        return label

    # -- loading --------------------------------------------------------------------------------------
    async def load(self) -> None:
        """Read the destinations and their stops (a thread: the stops are in the tenant databases)."""
        if self.editor is None:
            return
        editor = self.editor
        self.profiles, self.stops = await asyncio.to_thread(lambda: (editor.destinations(), editor.stops()))
        self._fill()

    def _fill(self, select: str | None = None) -> None:
        self.list.blockSignals(True)
        self.list.clear()
        for p in self.profiles:
            stop = self.stops.get(p.name)
            text = (
                f"⚠ {p.name} — stopped: {_printable(stop)}"
                if stop
                else f"{p.name} ({', '.join(p.severities)})"
            )
            self.list.addItem(text)
        self.list.blockSignals(False)
        names = [p.name for p in self.profiles]
        if select in names:
            self.list.setCurrentRow(names.index(select))
            self._show(names.index(select))

    def current(self) -> DestinationProfile | None:
        row = self.list.currentRow()
        return self.profiles[row] if 0 <= row < len(self.profiles) else None

    def _show(self, _row: int) -> None:
        self._showing += 1
        p = self.current()
        self._clear_errors()
        self.test_result.setText("")
        if p is None:
            return
        self.name.setText(p.name)
        self.name.setReadOnly(True)
        self._mask_url()
        self.url.setPlaceholderText("unchanged (type a new URL to replace it)")
        self.url_note.setText(f"Now: {p.url_masked}")
        for s, box in self.severity.items():
            box.setChecked(s in p.severities)
        self.rules.setText(", ".join(p.rules))
        self.tenants.setText(", ".join(p.tenants))
        self.held.setChecked(p.held_by_quiet)
        self.resolved.setChecked(p.sends_resolved)
        self.repeat.setValue(round(p.repeat_minutes))
        stop = self.stops.get(p.name)
        self.stopped.setText(
            f"Stopped: {_printable(stop)}. Give it a corrected URL to resume." if stop else ""
        )
        self.stopped.setVisible(bool(stop))

    def new_destination(self) -> None:
        self.list.setCurrentRow(-1)
        self._showing += 1
        self._clear_errors()
        self.name.setReadOnly(False)
        self.name.clear()
        self._mask_url()
        self.url.setPlaceholderText("e.g. json://hooks.example/alerts, mailtos://user:pass@mail.example")
        self.url_note.setText("Kept in the system keyring; the settings file shows it masked.")
        for s, box in self.severity.items():
            box.setChecked(s != "info")
        self.rules.clear()
        self.tenants.clear()
        self.held.setChecked(True)
        self.resolved.setChecked(
            True
        )  # a webhook's and a pager's default; e-mail and chat are usually unticked
        self.repeat.setValue(60)
        self.test_result.setText("")
        self.stopped.hide()

    def _clear_errors(self) -> None:
        for label in (self.name_error, self.url_error, self.fields_error):
            label.setText("")
            label.hide()

    def _show_error(self, exc: Exception) -> None:
        field = exc.field if isinstance(exc, ConfigError) else ""
        label = {"destination name": self.name_error, "destination url": self.url_error}.get(
            field, self.fields_error
        )
        label.setText(_printable(str(exc)))
        label.show()

    # -- actions --------------------------------------------------------------------------------------
    def _fields(self) -> dict[str, Any]:
        return {
            "severities": [s for s, box in self.severity.items() if box.isChecked()],
            "rules": [r.strip() for r in self.rules.text().split(",") if r.strip()],
            "tenants": [t.strip() for t in self.tenants.text().split(",") if t.strip()],
            "held_by_quiet": self.held.isChecked(),
            "send_resolved": self.resolved.isChecked(),
            "repeat_minutes": float(self.repeat.value()),
        }

    def _run(self, coro: Any) -> None:
        self._task = asyncio.ensure_future(coro)

    def save_destination(self) -> None:
        self._run(self._save())

    async def _save(self) -> None:
        if self.editor is None:
            return
        self._clear_errors()
        editor, name, url, fields = self.editor, self.name.text().strip(), self.url.text(), self._fields()
        try:
            saved = await asyncio.to_thread(editor.save, name, url, **fields)
        except UserFixableError as exc:
            self._show_error(exc)
            return
        self._mask_url()
        await self.load()
        self._fill(saved.name)
        self.changed.emit(list(self.profiles))

    def remove_destination(self) -> None:
        p = self.current()
        if p is not None:
            self._run(self._remove(p.name))

    async def _remove(self, name: str) -> None:
        if self.editor is None:
            return
        try:
            await asyncio.to_thread(self.editor.remove, name)
        except UserFixableError as exc:
            self._show_error(exc)
            return
        await self.load()
        self.new_destination()
        self.changed.emit(list(self.profiles))

    def send_test(self) -> None:
        self._run(self._test())

    async def _test(self) -> None:
        if self.editor is None:
            return
        self._clear_errors()
        self.test_button.setEnabled(False)
        self.test_result.setText("Sending a test alert…")
        showing = self._showing
        try:
            outcome = await asyncio.to_thread(self.editor.test, self.name.text().strip(), self.url.text())
        except UserFixableError as exc:
            if showing == self._showing:
                self.test_result.setText("")
                self._show_error(exc)
            return
        finally:
            self.test_button.setEnabled(True)
        if showing != self._showing:
            return  # another destination shown meanwhile: the result says nothing about it
        if outcome.kind == "delivered":
            self.test_result.setText("✓ Test alert delivered.")
        else:
            why = _printable(outcome.reason)
            hint = " Check the URL and its token." if outcome.kind == "stop" else " Try again later."
            self.test_result.setText(f"✗ Not delivered: {why}.{hint}")
