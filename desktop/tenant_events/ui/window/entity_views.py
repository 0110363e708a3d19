"""Who and what events are about, in the window: names as links and object timelines (timeline/), and the
"All tenants" view (merged/). The window holds one `EntityViews`; these parts wire themselves to it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from tenant_events.ui.window.merged.merged_controller import MergedController
from tenant_events.ui.window.timeline.timeline_controller import TimelineController

if TYPE_CHECKING:
    from tenant_events.ui.window.merged.merged_controller import MergedHost
    from tenant_events.ui.window.timeline.timeline_controller import TimelineHost

    class WindowHost(MergedHost, TimelineHost, Protocol):
        """The main window as both parts see it."""


class EntityViews:
    def __init__(self, window: WindowHost) -> None:
        self.timelines = TimelineController(window)
        self.merged = MergedController(window, self.timelines)

    def events_stored(self, tenant: str) -> None:
        self.merged.events_stored(tenant)

    def close(self) -> None:
        """Close the readers of the timelines and of "All tenants" (the window is shutting down)."""
        self.timelines.close()
        self.merged.close()
