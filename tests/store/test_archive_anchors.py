"""The page keys of a year's archive (`seq_anchors`) come back without a Python object per key that the garbage
collector tracks: 117,000 keys of a 30M-event year fetched as rows kept as many tuples alive at once, and the full
collection they set off (20-35 ms of CPU, holding the GIL) could fall on the window's thread while it opened."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from helpers.archive_pairs import tiered_pair
from helpers.history import history
from tenant_events.store import EventReader, archive_reader
from tenant_events.values.events import EventFilter

DAY = 86400.0
NOW = time.time()
FILTERS = (EventFilter(), EventFilter(query="type:user.*"), EventFilter(text="example"))


@contextmanager
def collections() -> Iterator[list[int]]:
    """The young generation's collections run meanwhile (at Python's default thresholds)."""
    runs: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            runs.append(info["generation"])

    old = gc.get_threshold()
    gc.collect()
    gc.set_threshold(700, 10, 10)
    gc.callbacks.append(seen)
    try:
        yield runs
    finally:
        gc.callbacks.remove(seen)
        gc.set_threshold(*old)


def _keys(reader: EventReader, f: EventFilter) -> Callable[[], list[int]]:
    return lambda: reader.seq_anchors(f, 10**9, 1)


# the list made into Python in parts (each alone, so a read thread never holds the GIL long): whole, or in many
@pytest.mark.parametrize("part", [archive_reader.LIST_PART, 100])
def test_page_keys_of_thousands_of_archived_events_come_as_one_list_not_a_tracked_row_each(
    tmp_path, monkeypatch, part
):
    monkeypatch.setattr(archive_reader, "LIST_PART", part)
    rows = history(4000, NOW - 90 * DAY, 90 * DAY / 4000, seed=11)
    one, two = tiered_pair(tmp_path, rows, NOW)  # the second: all but the last 10 days archived
    with EventReader(one) as single:
        expected = {f: _keys(single, f)() for f in FILTERS}
    with EventReader(two) as reader:
        assert reader.archived_upto() > 3000
        for f in FILTERS:
            _keys(reader, f)()  # a first question may keep the filter's matches (archive_matches.py)
            with collections() as runs:
                got = _keys(reader, f)()
            assert got == expected[f], f
            assert len(got) > 1000, f
            # as rows: one collection per 700 keys alive at once (5 or more here)
            assert len(runs) <= 1, (f, runs)
