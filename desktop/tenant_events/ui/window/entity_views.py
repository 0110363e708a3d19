"""Who and what events are about, in the window: names as links and object timelines (timeline/), and the
"All tenants" view (all_tenants/). The window holds one `EntityViews`; these parts wire themselves to it."""

from __future__ import annotations

from itertools import pairwise
from typing import TYPE_CHECKING, Protocol

from PySide6.QtWidgets import QWidget

from tenant_events.ui.window.all_tenants.all_tenants_controller import AllTenantsController
from tenant_events.ui.window.timeline.timeline_controller import TimelineController

if TYPE_CHECKING:
    from tenant_events.ui.window.all_tenants.all_tenants_controller import AllTenantsHost
    from tenant_events.ui.window.timeline.timeline_controller import TimelineHost

    class WindowHost(AllTenantsHost, TimelineHost, Protocol):
        """The main window as both parts see it."""


class EntityViews:
    def __init__(self, window: WindowHost) -> None:
        before = window.table.previousInFocusChain() or window.table
        self.timelines = TimelineController(window)
        self.all_tenants = AllTenantsController(window, self.timelines)
        # Moving the table and the detail pane into new containers put them last in the Tab order: restore it,
        # with the new parts where they sit on screen.
        pane, detail = self.timelines.pane, window.detail
        order = [
            before,
            window.table,
            self.all_tenants.view,
            pane.back_button,
            pane.forward_button,
            pane.close_button,
            pane.state,
            pane.table,
            self.timelines.names,
            detail.browser,
            detail.copy_button,
            detail.copy_jsonl_button,
        ]
        for first, second in pairwise(order):
            QWidget.setTabOrder(first, second)

    def events_stored(self, tenant: str) -> None:
        self.all_tenants.events_stored(tenant)

    def close(self) -> None:
        """Close the readers of the timelines and of "All tenants" (the window is shutting down)."""
        self.timelines.close()
        self.all_tenants.shut_down()
