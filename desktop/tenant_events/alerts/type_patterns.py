"""Event type patterns in rules: shell-style names (`organization.*`, `*.deleted`) → the event types they match.

Its own module because the rule model checks patterns when a rule is read and the matchers use them when rules
are compiled; the matchers also need the rule model's types, so neither may hold this for the other.
"""

from __future__ import annotations

import fnmatch

from tenant_events.wire.event_types import EVENT_TYPE_NAMES


def expand_types(patterns: list[str]) -> frozenset[str]:
    """Event type names matching shell-style patterns (`organization.*`, `*.deleted`, `user.created`)."""
    out: set[str] = set()
    for pattern in patterns:
        hits = {name for name in EVENT_TYPE_NAMES if fnmatch.fnmatchcase(name, pattern)}
        if not hits:
            raise ValueError(f"{pattern!r} matches no event type (e.g. user.deleted or organization.*)")
        out |= hits
    return frozenset(out)
