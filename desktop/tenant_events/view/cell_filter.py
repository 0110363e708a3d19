"""What "filter to this value" and "exclude it" mean for one cell of the event table.

Each choice names what it does (the menu shows `label`), how the filter bar applies it (`kind`, `value`) and
the same thing as a query-line term (`term`, e.g. `type:user.deleted`, `-type:user.updated`, `user:…`).
Only choices the filter can express are offered: free text cannot be excluded, so a summary offers none.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from tenant_events.wire import EventType
from tenant_events.wire.payloads import object_id
from tenant_events.wire.references import references

Kind = Literal["type", "text", "time", "test", "tenant"]
AROUND = timedelta(seconds=30)


@dataclass(frozen=True)
class FilterChoice:
    label: str
    kind: Kind
    value: str
    exclude: bool = False
    term: str = ""


def _quoted(text: str) -> str:
    return f'"{text}"' if any(c.isspace() for c in text) else text


def choices(
    column: str,
    cell: str,
    event_type: str,
    time_iso: str,
    purpose: str | None,
    data: Any,
    names: Mapping[str, str] | None = None,
) -> list[FilterChoice]:
    """The filter choices for the cell of `column` ('TIME', 'TYPE', … as in event_table_model.Col) of an
    event; `data` is the event's `data` object (None when not at hand); `names`: what the row's sentence calls
    each id it names (the menu says the name; the filter keeps the id)."""
    out: list[FilterChoice] = []
    if column == "TYPE":
        out += [
            FilterChoice(f"Show only {event_type}", "type", event_type, term=f"type:{event_type}"),
            FilterChoice(f"Hide {event_type}", "type", event_type, exclude=True, term=f"-type:{event_type}"),
        ]
    elif column == "TIME":
        out.append(FilterChoice("Show the minute around this time", "time", time_iso))
    elif column == "TENANT":
        out.append(FilterChoice(f"Show tenant {cell}", "tenant", cell))
    elif column == "PURPOSE":
        if purpose == "test":
            out.append(FilterChoice("Hide test events", "test", "test", exclude=True, term="-purpose:test"))
    elif cell:
        field = "id" if column == "ID" else "text"
        out.append(
            FilterChoice(f"Search for “{_short(cell)}”", "text", cell, term=f"{field}:{_quoted(cell)}")
        )
    about = _object_choice(event_type, data, names or {})
    if about is not None:
        out.append(about)
    return out


def _object_choice(event_type: str, data: Any, names: Mapping[str, str]) -> FilterChoice | None:
    """Every event about the same user / organization / group, whatever the column: named as the row names it
    ("about user grace@example.com"), else as the event does, else by its id."""
    try:
        kind = EventType(event_type)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    ident = object_id(kind, data)
    if ident is None:
        return None
    field = {"user": "user", "organization": "org", "group": "group"}[kind.family]
    noun = {"user": "user", "organization": "organization", "group": "group"}[kind.family]
    said = {r.id: r.name for r in references(event_type, data) if r.name}
    name = names.get(ident) or said.get(ident)
    label = f"{noun} {_short(name)}" if name and name != ident else f"this {noun} ({_short(ident)})"
    return FilterChoice(f"Show every event about {label}", "text", ident, term=f"{field}:{ident}")


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def minute_around(iso: str) -> tuple[datetime, datetime] | None:
    """The minute centred on an event's time (aware datetimes), or None for an unreadable time."""
    try:
        moment = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment - AROUND, moment + AROUND
