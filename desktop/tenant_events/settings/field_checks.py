"""Checks more than one settings model shares: event type names, and which field a validation error is about."""

from __future__ import annotations

from typing import Any

from tenant_events.wire.event_types import EVENT_TYPE_NAMES


def known_event_types(names: list[str]) -> list[str]:
    """`names` if each is one of the 22 event types; else ValueError naming the first unknown one."""
    for name in names:
        if name not in EVENT_TYPE_NAMES:
            raise ValueError(f"{name!r} is not an event type (there are 22 names, e.g. user.created)")
    return names


def field_of(error: dict[str, Any]) -> str:
    loc = [str(p) for p in error.get("loc", ())]
    msg = str(error.get("msg", ""))
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    # model-level URL checks say "auth_url: ..." themselves
    if not loc and ": " in msg:
        return msg.split(": ", 1)[0]
    return ".".join(loc) or "profile"
