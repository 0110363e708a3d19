"""Time ranges as the window shows and keeps them: labels that are never cut to half a time, and the span the
histogram draws for a filter (the filter's own range when it has one, so a zoom fills the width)."""

from __future__ import annotations

from datetime import UTC, datetime

from tenant_events.values.events import EventFilter


def range_label(since: datetime, until: datetime, now: datetime | None = None) -> str:
    """'23:15:40–23:18:02' today; with dates when the range is not within today (local time)."""
    now = (now or datetime.now(UTC)).astimezone()
    a, b = since.astimezone(), until.astimezone()
    if a.date() == b.date() == now.date():
        return f"{a:%H:%M:%S}–{b:%H:%M:%S}"
    if a.date() == b.date():
        return f"{a:%b %d} {a:%H:%M:%S}–{b:%H:%M:%S}"
    return f"{a:%b %d %H:%M}–{b:%b %d %H:%M}"


def filter_span(flt: EventFilter, now: datetime | None = None) -> tuple[int, int] | None:
    """The (start, end) unix seconds the filter covers, or None when it has no lower bound."""
    if flt.since is None:
        return None
    end = flt.until or now or datetime.now(UTC)
    start, stop = int(flt.since.timestamp()), int(end.timestamp())
    return (start, stop) if stop > start else None


def to_iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat()  # to the microsecond: a saved range comes back exactly


def from_iso(text: object) -> datetime | None:
    """An aware datetime from saved text, or None for anything that is not one."""
    if not isinstance(text, str):
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None
