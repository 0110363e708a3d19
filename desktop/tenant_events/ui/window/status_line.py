"""The main window's status bar: stream state with its reason, cursor age, events/s, possible gaps and the
rejected-messages button."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QPushButton, QStatusBar

from tenant_events.ui.look.elided_label import ElidedLabel
from tenant_events.view.tenant_status import TenantStatus, age_text, rate_text


class StatusLine:
    """The widgets of the status bar and how a tenant's numbers are written into them."""

    def __init__(self, bar: QStatusBar) -> None:
        # A long reason (a storage failure names the database's path, then what Tenant Events does about it) is cut
        # with "…" at the window's edge, the whole of it on hover.
        self.state_label = ElidedLabel("No tenant")
        self.state_label.setAccessibleName("Stream state")
        self.age_label = QLabel()
        self.rate_label = QLabel()
        self.gap_label = QLabel()
        self.rejected_button = QPushButton("0 rejected")
        self.rejected_button.setFlat(True)
        self.rejected_button.setToolTip("Messages the app rejected; click to list them")
        bar.addWidget(self.state_label, 1)
        for w in (self.age_label, self.rate_label, self.gap_label, self.rejected_button):
            bar.addPermanentWidget(w)

    def show(self, tenant: str | None, status: TenantStatus | None) -> None:
        if status is None:
            self.state_label.setText("No tenant" if tenant is None else f"{tenant}: starting")
            return
        self.state_label.setText(status.line())
        self.age_label.setText(age_text(status.cursor_age_s))
        self.rate_label.setText(rate_text(status))

    def show_counts(self, rejected: int, gaps: int) -> None:
        self.rejected_button.setText(f"{rejected:,} rejected")
        self.gap_label.setText(f"{gaps} possible gap{'s' if gaps != 1 else ''}" if gaps else "")
        self.gap_label.setToolTip(
            "Events may be missing where the table shows a possible-gap row (e.g. the cursor expired)"
            if gaps
            else ""
        )
