"""An object's state before an update, for rules that look at what an update changed (`changed`, `grew`).

The update's diff is the one the detail pane shows (view/update_diff.py): `data.previous_object` when the event
carries it; otherwise the object as the newest earlier event about it had it. The engine remembers the objects
of the events it parses (bounded), and asks the store (`earlier`) for one it has not seen since it started.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, Final

from tenant_events.store.alert_records import EvalRow
from tenant_events.view.update_diff import identity, is_update

MAX_OBJECTS: Final = 50_000
Earlier = Callable[[EvalRow, Mapping[str, Any]], dict[str, Any] | None]


class ObjectStates:
    """The newest known `data.object` per object identity (least recently used dropped first)."""

    def __init__(self) -> None:
        self._objects: OrderedDict[tuple[str | None, ...], dict[str, Any]] = OrderedDict()

    def with_before(
        self, row: EvalRow, data: Mapping[str, Any], earlier: Earlier | None
    ) -> Mapping[str, Any]:
        """`data`, with `previous_object` filled in for an update that lacks it and whose object is known."""
        obj = data.get("object")
        key = identity(row.type, data)
        if not isinstance(obj, dict) or key is None or not all(key):
            return data
        key = (row.type.rsplit(".", 1)[0], *key)
        known = self._objects.pop(key, None)
        self._objects[key] = obj
        if len(self._objects) > MAX_OBJECTS:
            self._objects.popitem(last=False)
        if not is_update(row.type) or isinstance(data.get("previous_object"), dict):
            return data
        if known is None and earlier is not None:
            known = earlier(row, data)
        return {**data, "previous_object": known} if known is not None else data
