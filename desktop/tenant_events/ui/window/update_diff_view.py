"""The "What changed" block of the detail pane for `*.updated` events (view/update_diff.py does the diff).

`diff_for` looks the object's earlier state up in the store when the event carries no `previous_object`:
one full-text page of at most a few rows, bounded to the event's types and to rows stored before it.
"""

from __future__ import annotations

import html

from tenant_events.ui.window.table.event_table_model import local_time
from tenant_events.values.events import EventFilter, StoredEvent
from tenant_events.view import event_text
from tenant_events.view.tenant_reader import TenantReader
from tenant_events.view.update_diff import (
    Change,
    UpdateDiff,
    earlier_query,
    identity,
    is_update,
    short_value,
    update_diff,
)

CANDIDATES = 5  # earlier rows the text search may return before the one about the same object
# (background, text) per kind and theme; every pair keeps 4.5:1 contrast or more.
COLOURS = {
    False: {
        "added": ("#dafbe1", "#1f2328"),
        "changed": ("#fff8c5", "#1f2328"),
        "removed": ("#ffebe9", "#1f2328"),
    },
    True: {
        "added": ("#12361f", "#e6edf3"),
        "changed": ("#3d2f00", "#e6edf3"),
        "removed": ("#4a1d1d", "#e6edf3"),
    },
}
SOURCE_TEXT = {
    "previous_object": "Changed by this update (the event carries the object before and after):",
    "earlier_event": "Changed since the earlier event about this object ({when}):",
    "fields_set": "Fields this update set (no earlier state of this object is stored):",
}


def diff_for(reader: TenantReader, ev: StoredEvent) -> tuple[UpdateDiff, str] | None:
    """The update's changes and when the state it is compared with was stored ('' if not compared)."""
    if not is_update(ev.type):
        return None
    data = event_text.data_of(ev.raw)
    if data is None:
        return None
    if isinstance(data.get("previous_object"), dict):
        diff = update_diff(ev.type, data)
        return (diff, "") if diff else None
    earlier, when = None, ""
    query = earlier_query(ev.type, data)
    if query is not None:
        flt = EventFilter(types=query.types, text=query.text)
        for cand in reader.older(flt, ev.seq, CANDIDATES):
            full = reader.get(cand.seq)
            cand_data = event_text.data_of(full.raw if full else None)
            if full is not None and cand_data is not None and identity(full.type, cand_data) == query.key:
                obj = cand_data.get("object")
                if isinstance(obj, dict):
                    earlier, when = obj, f"{full.type} at {local_time(full.time)}"
                break
    diff = update_diff(ev.type, data, earlier)
    return (diff, when) if diff else None


def changes_html(diff: UpdateDiff, when: str, dark: bool) -> str:
    """An HTML table of the changes, each row tinted by kind; empty when nothing changed."""
    heading = SOURCE_TEXT[diff.source].format(when=html.escape(when))
    if not diff.changes:
        return f"<p style='margin:0 0 6px 0'>{heading} <i>nothing</i></p>"
    rows = "".join(_row(c, dark) for c in diff.changes)
    return (
        f"<p style='margin:0 0 4px 0'><b>What changed</b> — {heading}</p>"
        "<table cellspacing='0' cellpadding='3' style='margin-bottom:8px'>"
        f"<tr><th align='left'>Field</th><th align='left'>Before</th><th align='left'>After</th></tr>{rows}</table>"
    )


def _row(change: Change, dark: bool) -> str:
    background, text = COLOURS[dark][change.kind]
    style = f"background-color:{background}; color:{text}"
    cells = (change.path, short_value(change.before), short_value(change.after))
    return (
        "<tr>" + "".join(f"<td style='{style}'><code>{html.escape(c)}</code></td>" for c in cells) + "</tr>"
    )
