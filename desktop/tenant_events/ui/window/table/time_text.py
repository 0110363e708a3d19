"""Event times as the table shows them: local wall time in the cell, UTC with milliseconds in the tooltip."""

from __future__ import annotations

from datetime import UTC, datetime


def local_time(iso: str) -> str:
    """Local wall time; the date only when it is not today."""
    try:
        when = datetime.fromisoformat(iso.replace("Z", "+00:00")).astimezone()
    except ValueError:
        return iso
    if when.date() == datetime.now().astimezone().date():
        return when.strftime("%H:%M:%S")
    return when.strftime("%Y-%m-%d %H:%M:%S")


def utc_tooltip(iso: str) -> str:
    try:
        when = datetime.fromisoformat(iso.replace("Z", "+00:00")).astimezone(UTC)
    except ValueError:
        return iso
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z") + " (UTC)"
