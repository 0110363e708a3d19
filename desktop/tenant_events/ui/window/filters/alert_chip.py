"""The filter bar's "alert: Mass deletion ✕" chip: the table shows only the events behind one alert.

"Show these events in the table" (the alerts inbox) sets it. It stands for the query term `alert:ID` (the same
term the CLI's `export --query` understands), ANDed with whatever the query line holds, so the line stays free
for the user's own terms; clicking the chip removes it. Alert numbers are per tenant, so showing another tenant
(or all of them) removes it too.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QToolButton, QWidget


@dataclass(frozen=True)
class AlertPick:
    alert_id: int
    name: str  # the rule's name, as the inbox shows it
    tenant: str = ""  # whose alert (its number means nothing in another tenant's store)

    @property
    def term(self) -> str:
        return f"alert:{self.alert_id}"


def with_alert(pick: AlertPick | None, query: str) -> str:
    """The query the store runs: the alert's term AND the query line (in parentheses: it may hold an OR)."""
    if pick is None:
        return query
    return f"{pick.term} ({query})" if query else pick.term


class AlertChip(QToolButton):
    removed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.pick: AlertPick | None = None
        self.setAutoRaise(False)
        self.setObjectName("alertChip")
        self.clicked.connect(self.remove)
        self.hide()

    def set_pick(self, pick: AlertPick | None) -> None:
        self.pick = pick
        if pick is not None:
            self.setText(f"alert: {pick.name}  ✕")
            self.setToolTip(
                f"Only the events behind this alert ({pick.term}); click to show all events again"
            )
            self.setAccessibleName(f"Alert filter: {pick.name}; press to remove")
        self.setVisible(pick is not None)

    def remove(self) -> None:
        if self.pick is not None:
            self.set_pick(None)
            self.removed.emit()
