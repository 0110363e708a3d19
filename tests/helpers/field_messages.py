"""Random `data:` JSON for the query line's fields: a value at every path an event type's fields read, for the
tests that hold the archive's stored field values to the live tier's (test_archive_build, test_field_scan)."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import strategies as st

from tenant_events.query.fields import FIELDS, TYPE_NAMES, types_matching


def paths_of(event_type: str) -> list[list[str]]:
    """The keys down to every value the query line's fields read on `event_type`."""
    return [
        p.path.removeprefix("$.").split(".")
        for f in FIELDS
        for p in f.paths
        if p.types is None or any(event_type in types_matching(t) for t in p.types)
    ]


def messages(
    scalars: st.SearchStrategy[object],
    texts: st.SearchStrategy[str],
    written: Callable[[st.DrawFn, dict[str, object]], str],
) -> st.SearchStrategy[tuple[str, str]]:
    """An event type and its `data:` JSON (as `written` writes the message), whose every path the type's fields
    read holds a random value of `scalars`, lists and objects, or stops early at a value that is not an object."""
    values = st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
        max_leaves=6,
    )

    @st.composite
    def made(draw: st.DrawFn) -> tuple[str, str]:
        event_type = draw(st.sampled_from(sorted(TYPE_NAMES)))
        message: dict[str, object] = {}
        for keys in paths_of(event_type):
            node = message
            for key in keys[:-1]:
                child = node.setdefault(key, {} if draw(st.integers(0, 9)) else draw(scalars))
                if not isinstance(child, dict):
                    break
                node = child
            else:
                node[keys[-1]] = draw(values)
        return event_type, written(draw, message)

    return made()
