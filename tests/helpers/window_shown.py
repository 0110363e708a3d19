"""What the main window shows a user, read the way a user reads it: the first screen of rows in time order, their
summaries named from the entity directory, the count and the histogram. Shared by the store-failure tests, whose
window must stay like this while the store is paused and look like it again once the store is back."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from helpers.slack import bound
from tenant_events.store.entity_reader import open_directory
from tenant_events.ui.window.table.event_table_model import SENTENCE_ROLE, Col

SHOWN = 25  # the rows the window shows without scrolling


def window_rows(w: Any) -> list:
    rows = [w.model.event_at(r) for r in range(min(SHOWN, w.model.rowCount()))]
    return [e for e in rows if e is not None]


def in_time_order(w: Any) -> bool:
    times = [e.time for e in window_rows(w)]
    return bool(times) and times == sorted(times, reverse=True)


def sentences(w: Any) -> list:
    return [w.model.data(w.model.index(r, Col.SUMMARY), SENTENCE_ROLE) for r in range(len(window_rows(w)))]


def named(w: Any) -> bool:
    """Every shown row's summary is a sentence with names (not the stored summary with raw ids)."""
    shown = sentences(w)
    return bool(shown) and all(s is not None for s in shown)


def _directory_upto(db: Path) -> int:
    with open_directory(db) as directory:
        return directory.watermark()


async def until_named(w: Any, db: Path, what: str, still: float = 30) -> None:
    """Until every shown row is named. Rows of a catch-up are named as the indexer reaches them, minutes after they
    are shown when a long one meets a loaded machine: this fails only once the directory (`db`'s) has not moved
    for `still` seconds (stretched for load), with rows still said by their ids."""
    upto, moved = -1, time.monotonic()
    while not named(w):
        now = await asyncio.to_thread(_directory_upto, db)
        if now != upto:
            upto, moved = now, time.monotonic()
        assert time.monotonic() - moved < bound(still), f"{what}: the directory stopped at seq {upto}"
        await asyncio.sleep(0.2)


def names_by_id(w: Any) -> dict[str, bool]:
    """Each shown row's event id and whether its summary is named."""
    return {e.event_id: s is not None for e, s in zip(window_rows(w), sentences(w), strict=True)}


def names_lost(w: Any, before: dict[str, bool]) -> list[str]:
    """Rows named in `before` that the window now shows by their ids. A row stored a moment before the store broke
    may never have been named (the indexer names rows after they are shown); it stays as it was shown."""
    now = names_by_id(w)
    return [i for i, was in before.items() if was and now.get(i) is False]


def counted(w: Any) -> bool:
    """The count and the histogram show what is stored (not "0 events", not "No events for this filter yet")."""
    return w.filter_bar._count_text not in ("", "0 events") and bool(w.histogram.buckets)


def shown_count(w: Any) -> int:
    """The count the filter bar shows ("17,505 events")."""
    return int(w.filter_bar._count_text.split()[0].replace(",", ""))


def names_unlike_the_directory(shown: list, directory: Any) -> list[str]:
    """Each name the directory knows by a label, shown as a bare id instead (blocking: a worker thread)."""
    wrong = []
    for sentence in shown:
        for m in sentence.mentions if sentence is not None else ():
            known = directory.entity(m.kind, m.id)
            if known is not None and known.label != known.id and m.label == m.id:
                wrong.append(f"{m.kind} {m.id} shown as its id; the directory knows {known.label!r}")
    return wrong


async def named_as_the_directory(w: Any, directory: Any, wait_s: float = 60) -> None:
    """Wait until no shown row says by its id a name the directory knows: rows of a catch-up are named once the
    indexer has put them into the directory, which on a loaded machine comes well after they are shown."""
    deadline = time.monotonic() + bound(wait_s)
    while wrong := await asyncio.to_thread(names_unlike_the_directory, sentences(w), directory):
        assert time.monotonic() < deadline, wrong
        await asyncio.sleep(0.5)
