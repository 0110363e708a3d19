"""Hostile inputs for the archive's pairs of tokens (store/archive_pairs.py): a phrase's count, histogram and
counts by type over an archived store stay the single-tier store's (FTS5's own phrase match) where the writer's
tokens and FTS5's could part."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from helpers.archive_pairs import store_rows
from helpers.history import history
from tenant_events.store import EventReader, EventRow
from tenant_events.store import archive_candidates as candidates
from tenant_events.values.events import EventFilter

DAY = 86400.0
NOW = time.time()


def _named(row: EventRow, k: int) -> EventRow:
    """Users' nicknames "Qzwa Qzwb" (the rows confirm those), every third one's "Qzwc" (a word of the values)."""
    data = orjson.loads(row.raw)
    obj = data["event"]["data"].get("object")
    if row.type != "user.updated" or not isinstance(obj, dict):
        return row
    obj["nickname"] = "Qzwa Qzwb" if k % 3 else "Qzwc"
    return row._replace(raw=orjson.dumps(data).decode())


def _compare(tmp: Path, monkeypatch: pytest.MonkeyPatch, change: Callable[[EventRow, int], EventRow]) -> None:
    rows = history(600, NOW - 60 * DAY, 55 * DAY / 600, seed=5)
    rows = [change(_named(r, k), k) for k, r in enumerate(rows)]
    one, two = tmp / "one.sqlite3", tmp / "two.sqlite3"
    store_rows(one, rows, None, NOW)
    store_rows(two, rows, 3, NOW)
    monkeypatch.setattr(candidates, "FEW_CANDIDATES", 2)
    with EventReader(one) as single, EventReader(two) as cold:
        for text in ('"qzwa qzwb"', '"qzwb qzwc"', '"qzwa qzwb" type:user.*', "qzwa-qzwb"):
            f = EventFilter(query=text) if '"' in text else EventFilter(text=text)
            assert cold.count(f) == single.count(f), text
            assert cold.histogram(f, 86400) == single.histogram(f, 86400), text
            assert cold.counts_by_type(f) == single.counts_by_type(f), text


def test_a_control_character_between_words_of_a_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stored summary holding a control character between words: FTS5 splits there, and the writer's tokens
    must too (they keep that character as their own marker of two tokens kept apart)."""

    def change(row: EventRow, k: int) -> EventRow:
        return row._replace(summary="Qzwa\x01Qzwb \x01qzwb\x01qzwc") if k % 7 == 1 else row

    _compare(tmp_path, monkeypatch, change)


def test_a_control_character_between_words_of_an_event_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An envelope's id spelled with `\\u0001` is decoded: the event id holds the control character itself."""

    def change(row: EventRow, k: int) -> EventRow:
        return row._replace(event_id=f"{row.event_id}-qzwa\x01qzwb\x01qzwc") if k % 7 == 1 else row

    _compare(tmp_path, monkeypatch, change)


def test_a_control_character_as_received_in_the_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """JSON as received with a control character unescaped (no JSON reader takes it; the index still does)."""

    def change(row: EventRow, k: int) -> EventRow:
        return (
            row._replace(raw=row.raw.replace('"data":', '"note":"qzwa\x01qzwb\x01qzwc","data":', 1))
            if k % 7 == 1
            else row
        )

    _compare(tmp_path, monkeypatch, change)
