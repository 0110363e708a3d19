"""What the timeline pane shows, read off the UI thread: an object's state and its events in pages, with
sentences; and the pane's back/forward history.

Over entities/timeline.py `Timelines` (one directory reader per tenant database): `first` resolves the object in
every tenant and reads its state and first page; `more` reads the next (older) page from the positions the
last one left, so a timeline of any length is never loaded whole. Blocking: call on a worker thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import orjson

from tenant_events.entities.objects import ObjectSpec
from tenant_events.entities.sentences import Sentence, describe_all
from tenant_events.entities.state_text import state_lines
from tenant_events.entities.timeline import Key, TimelineEntry, Timelines
from tenant_events.store.entity_records import Entity
from tenant_events.values.events import StoredEvent

PAGE: Final = 100


@dataclass(frozen=True, slots=True)
class TimelineRow:
    tenant: str
    event: StoredEvent
    sentence: Sentence


@dataclass
class TimelineScreen:
    """One object's timeline as far as read: who it is, its state per tenant, the rows read so far."""

    spec: ObjectSpec
    label: str
    entities: list[tuple[str, Entity]]
    state: list[str]
    rows: list[TimelineRow]
    before: dict[Key, int] = field(default_factory=dict)
    done: bool = False


def _data(ev: StoredEvent) -> dict[str, Any]:
    try:
        data = orjson.loads(ev.raw or "{}")["event"]["data"]
    except (orjson.JSONDecodeError, KeyError, TypeError):
        return {}
    return data if isinstance(data, dict) else {}


class TimelineSource:
    """Timelines over the tenants' databases (`{tenant: path}`); close when the tenants change."""

    def __init__(self, stores: Mapping[str, Path]) -> None:
        self.stores = dict(stores)
        self._timelines: Timelines | None = None

    @property
    def timelines(self) -> Timelines:
        if self._timelines is None:
            self._timelines = Timelines(self.stores)
        return self._timelines

    def close(self) -> None:
        if self._timelines is not None:
            self._timelines.close()
            self._timelines = None

    def first(self, spec: ObjectSpec, limit: int = PAGE) -> TimelineScreen:
        """Who it is and its newest entries; the state comes apart (`state`): a busy role's thousands of links take
        longer to work out than the entries, and the list should not wait for them."""
        timelines = self.timelines
        entities = timelines.resolve(spec)
        known = [e for _t, e in entities if e.label != e.id]
        screen = TimelineScreen(spec, known[0].label if known else spec.text, entities, [], [])
        self.more(screen, limit)
        return screen

    def state(self, screen: TimelineScreen) -> list[str]:
        """The object's state in each tenant, as lines (entities/state_text.py)."""
        lines: list[str] = []
        for tenant, state in self.timelines.states(screen.entities):
            tenant_lines = state_lines(state)
            if len(self.stores) > 1:
                tenant_lines[0] = f"{tenant}: {tenant_lines[0]}"
            lines += tenant_lines
        if not lines:
            spec = screen.spec
            lines = [f"{spec.kind} {spec.text}", "  not in the directory: no stored event describes it"]
        screen.state = lines
        return lines

    def more(self, screen: TimelineScreen, limit: int = PAGE) -> list[TimelineRow]:
        """Read the next page into `screen` (its rows, position and `done`) and return the new rows."""
        if screen.done:
            return []
        page = self.timelines.page(screen.entities, screen.before, limit)
        rows = self._described(page.entries)
        screen.rows += rows
        screen.before, screen.done = page.before, page.done or not page.entries
        return rows

    def _described(self, entries: list[TimelineEntry]) -> list[TimelineRow]:
        by_tenant: dict[str, list[TimelineEntry]] = {}
        for entry in entries:
            by_tenant.setdefault(entry.tenant, []).append(entry)
        sentences: dict[tuple[str, int], Sentence] = {}
        for tenant, mine in by_tenant.items():
            said = describe_all(
                [(e.event.type, _data(e.event)) for e in mine], self.timelines.directory(tenant)
            )
            sentences.update({(tenant, e.event.seq): s for e, s in zip(mine, said, strict=True)})
        return [TimelineRow(e.tenant, e.event, sentences[(e.tenant, e.event.seq)]) for e in entries]


class History:
    """The objects the pane showed, for back and forward (like a browser's)."""

    def __init__(self) -> None:
        self._back: list[ObjectSpec] = []
        self._forward: list[ObjectSpec] = []
        self.current: ObjectSpec | None = None

    def visit(self, spec: ObjectSpec) -> None:
        if spec == self.current:
            return
        if self.current is not None:
            self._back.append(self.current)
        self.current = spec
        self._forward.clear()

    def back(self) -> ObjectSpec | None:
        if not self._back or self.current is None:
            return None
        self._forward.append(self.current)
        self.current = self._back.pop()
        return self.current

    def forward(self) -> ObjectSpec | None:
        if not self._forward or self.current is None:
            return None
        self._back.append(self.current)
        self.current = self._forward.pop()
        return self.current

    @property
    def can_back(self) -> bool:
        return bool(self._back)

    @property
    def can_forward(self) -> bool:
        return bool(self._forward)
