"""A list of the stream messages the app rejected (kept raw, never dropped silently: docs/event-stream.md "Message kinds")."""

from __future__ import annotations

import time

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QPlainTextEdit, QVBoxLayout, QWidget

from tenant_events.values.events import StoredRejected


class RejectedDialog(QDialog):
    def __init__(self, tenant: str, rows: list[StoredRejected], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Rejected messages — {tenant}")
        self.resize(760, 420)
        text = QPlainTextEdit()
        text.setReadOnly(True)
        text.setAccessibleName("Rejected messages")
        if not rows:
            text.setPlainText("No rejected messages.")
        for r in rows:
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(r.received_at))
            text.appendPlainText(
                f"{when}  {r.event_name}  offset={r.offset or '-'}\n  {r.reason}\n  {r.raw[:500]}\n"
            )
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(text)
        layout.addWidget(buttons)
