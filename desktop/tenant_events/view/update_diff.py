"""What a `*.updated` event changed, for the detail pane.

The stream's `data` carries the object as it is after the update (`data.object`). The service's event catalogue
also has `data.previous_object` (docs/event-stream.md "Payloads"); when it is there, the change is exact. When it is not, the
object is compared with the newest earlier event about the same object in the store (its created/updated/added
event). With neither, the fields the update carried are listed as set. Nested objects compare by dotted path.

    source            compared with
    previous_object   data.previous_object of this event
    earlier_event     data.object of the newest earlier created/updated event about the same object
    fields_set        nothing: every field of data.object, as set
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final, Literal

from tenant_events.wire import EventType
from tenant_events.wire.payloads import object_id


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()
Source = Literal["previous_object", "earlier_event", "fields_set"]
# The object's identity: never a change worth showing (they are the same by construction).
IDENTITY: Final = frozenset({"id", "user_id", "created_at"})
MAX_DEPTH: Final = 4


@dataclass(frozen=True)
class Change:
    path: str
    before: Any
    after: Any

    @property
    def kind(self) -> Literal["added", "removed", "changed"]:
        if self.before is MISSING:
            return "added"
        if self.after is MISSING:
            return "removed"
        return "changed"


@dataclass(frozen=True)
class UpdateDiff:
    source: Source
    changes: list[Change]


def is_update(event_type: str) -> bool:
    return event_type.endswith(".updated")


def diff_objects(
    before: dict[str, Any], after: dict[str, Any], prefix: str = "", depth: int = 0
) -> list[Change]:
    """Field-by-field changes from `before` to `after`, in `after`'s key order (removed keys last)."""
    out: list[Change] = []
    for key, new in after.items():
        path = f"{prefix}{key}"
        if not prefix and key in IDENTITY:
            continue
        old = before.get(key, MISSING)
        if isinstance(old, dict) and isinstance(new, dict) and depth < MAX_DEPTH:
            out += diff_objects(old, new, f"{path}.", depth + 1)
        elif old != new:
            out.append(Change(path, old, new))
    for key, old in before.items():
        if key not in after and not (not prefix and key in IDENTITY):
            out.append(Change(f"{prefix}{key}", old, MISSING))
    return out


def fields_set(after: dict[str, Any]) -> list[Change]:
    return [Change(k, MISSING, v) for k, v in after.items() if k not in IDENTITY]


def update_diff(
    event_type: str, data: Any, earlier_object: dict[str, Any] | None = None
) -> UpdateDiff | None:
    """The changes of an update event (None for other events or a `data` without an object)."""
    if not is_update(event_type) or not isinstance(data, dict):
        return None
    after = data.get("object")
    if not isinstance(after, dict):
        return None
    previous = data.get("previous_object")
    if isinstance(previous, dict):
        return UpdateDiff("previous_object", diff_objects(previous, after))
    if earlier_object is not None:
        return UpdateDiff("earlier_event", diff_objects(earlier_object, after))
    return UpdateDiff("fields_set", fields_set(after))


@dataclass(frozen=True)
class EarlierQuery:
    """How to find the newest earlier event about the same object: its types, and text that finds it."""

    types: frozenset[str]
    text: str
    key: tuple[str | None, ...]


def earlier_query(event_type: str, data: Any) -> EarlierQuery | None:
    """Where the object's previous state is stored (None when the event does not identify its object)."""
    try:
        kind = EventType(event_type)
    except ValueError:
        return None
    if not is_update(event_type) or not isinstance(data, dict):
        return None
    key = identity(event_type, data)
    if key is None or not all(key):
        return None
    stem = event_type.rsplit(".", 1)[0]
    first = f"{stem}.added" if kind == EventType("organization.connection.updated") else f"{stem}.created"
    return EarlierQuery(frozenset({first, event_type}), " ".join(k for k in key if k), key)


def identity(event_type: str, data: Any) -> tuple[str | None, ...] | None:
    """What makes two events about the same object: its id (and the connection's, for an org connection)."""
    try:
        kind = EventType(event_type)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    ident = object_id(kind, data)
    if ".connection." in event_type:
        obj = data.get("object")
        con = obj.get("connection") if isinstance(obj, dict) else None
        con_id = con.get("id") if isinstance(con, dict) else None
        return ident, con_id if isinstance(con_id, str) else None
    return (ident,)


def short_value(value: Any, limit: int = 60) -> str:
    """A value as the changes list shows it: JSON-ish, cut to `limit` characters."""
    if value is MISSING:
        return "—"
    if isinstance(value, str):
        text = f'"{value}"'
    elif value is None:
        text = "null"
    elif isinstance(value, bool):
        text = "true" if value else "false"
    else:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return text if len(text) <= limit else text[: limit - 1] + "…"
