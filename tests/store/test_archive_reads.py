"""The archive's filter reads that take shortcuts answer as a single-tier store: a filter's kept matches
(count, time span, histogram, page keys from one scan) follow the archive as moves change it under one open
reader, and a phrase among few candidates is checked on the small columns first and on the raw JSON only for
the rest (docs/archive.md "Queries")."""

from __future__ import annotations

import time
from pathlib import Path

import orjson
import pytest

from helpers.history import history
from tenant_events.store import Batch, EventReader, EventRow, StoreWriter, archive_candidates
from tenant_events.store.archive_catalog import snapshot
from tenant_events.store.archive_keeper import keep
from tenant_events.store.archive_layout import folder_of
from tenant_events.store.archive_reader import ArchiveReader
from tenant_events.store.archive_source import ArchiveMoved
from tenant_events.store.schema import connect
from tenant_events.values.events import EventFilter
from tenant_events.values.retention import Retention

DAY = 86400.0
NOW = time.time()


def _with_note(row: EventRow, note: str) -> EventRow:
    """`row` with `note` in its raw JSON only (no summary or id holds it)."""
    data = orjson.loads(row.raw)
    data["event"]["data"].setdefault("context", {})["note"] = note
    return row._replace(raw=orjson.dumps(data).decode())


def _with_email(row: EventRow, email: str) -> EventRow:
    """`row` (a user's event) with `email`, which its summary names."""
    data = orjson.loads(row.raw)
    data["event"]["data"]["object"]["email"] = email
    return row._replace(raw=orjson.dumps(data).decode())


def _store(path: Path, rows: list[EventRow]) -> None:
    writer = StoreWriter(path)
    try:
        for at in range(0, len(rows), 400):
            writer.commit_sync(Batch(events=rows[at : at + 400]))
        writer.index_all_sync()
    finally:
        writer.close()


def _move(path: Path, keep_days: float) -> None:
    writer = StoreWriter(path)
    try:
        keep(writer, Retention(keep_live_days=keep_days, settle_seconds=0), NOW)
        writer.index_all_sync()
    finally:
        writer.close()


def _answers(reader: EventReader, f: EventFilter) -> tuple[object, ...]:
    span = reader.time_span(f)
    return (
        reader.count(f),
        span,
        reader.counts_by_type(f),
        reader.histogram(f, 86400),
        reader.seq_anchors(f, 10**9, 7),
        [e.seq for e in reader.page_before(f, None, 50)],
    )


FILTERS = (
    EventFilter(query="user:ada"),
    EventFilter(text="example"),
    EventFilter(query='"zyx qwv"'),
    EventFilter(text='"zyx qwv"', query="type:user.*"),
    EventFilter(query='org:acme OR "qwv zyx"'),
    EventFilter(text='"example com"'),
    EventFilter(text='"example com"', query="type:user.updated"),
    EventFilter(query='"grace hamilton" -type:user.deleted'),
)


# 6: "zyx qwv" has more candidates than that, and the five only its raw JSON holds are few enough to check there
@pytest.mark.parametrize("few", [256, 6])
def test_kept_matches_and_phrase_checks_answer_as_one_store_while_moves_change_the_archive(
    tmp_path, monkeypatch, few
):
    monkeypatch.setattr(archive_candidates, "FEW_CANDIDATES", few)
    rows = history(1500, NOW - 90 * DAY, 90 * DAY / 1500, seed=5)
    # the phrase in order in the raw JSON alone (old and recent events), and its words the other way round
    for k, note in (
        (40, "zyx qwv"),
        (700, "a zyx, qwv!"),
        (1400, "zyx qwv"),
        (90, "qwv zyx"),
        (800, "qwv zyx"),
    ):
        rows[k] = _with_note(rows[k], note)
    # and in the summaries of eight users' events (an e-mail): more candidates than a few, most settled there
    updated = [k for k, r in enumerate(rows) if r.type == "user.updated"]
    for n, k in enumerate(updated[:: max(1, len(updated) // 8)][:8]):
        rows[k] = _with_email(rows[k], f"zyx.qwv.{n}@example.com")
    one, two = tmp_path / "one.sqlite3", tmp_path / "two.sqlite3"
    _store(one, rows)
    _store(two, rows)
    with EventReader(one) as single:
        expected = {f: _answers(single, f) for f in FILTERS}
    assert expected[FILTERS[2]][0] == 3 + 8 and expected[FILTERS[0]][0] > 0
    with EventReader(two) as reader:
        for keep_days in (60, 30, 10):  # the same open reader asks again after each move
            _move(two, keep_days)
            assert reader.archived_upto() > 0
            for f in FILTERS:
                assert _answers(reader, f) == expected[f], (keep_days, f)


def test_a_file_gone_under_a_kept_filters_scan_asks_for_a_new_snapshot(tmp_path):
    """A month's file deleted after the snapshot listed it (merged, expired): the scan that keeps a filter's
    matches says so as every read does (ArchiveMoved: the reader reads again), not as DuckDB's own error."""
    path = tmp_path / "t.sqlite3"
    _store(path, history(600, NOW - 90 * DAY, 90 * DAY / 600, seed=6))
    _move(path, 30)
    conn = connect(path, readonly=True)
    try:
        snap = snapshot(conn)
    finally:
        conn.close()
    reader = ArchiveReader(folder_of(path))
    try:
        (folder_of(path) / snap.files[0].name).unlink()  # its token file stays: the lookups find candidates
        with pytest.raises(ArchiveMoved):
            reader.count(snap, EventFilter(text="example"), {})
    finally:
        reader.close()
