"""The access history beside the archive tier: whichever schema 6 a file was left at (the archive's catalog, or an
earlier build's access tables), it opens with both and the same spans; events move to the archive only once the
history has taken them in; a history built after they moved (an older file, `reindex`) reads them from the
archive; and a diff's lines still name the events that did each change after those moved."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from helpers.entity_events import T0, simulated_rows
from tenant_events.store import Batch, StoreWriter, duck
from tenant_events.store import archive_move as move
from tenant_events.store.access_reader import AccessReader
from tenant_events.store.access_settled import SPAN_COLUMNS, listed
from tenant_events.store.archive_catalog import snapshot
from tenant_events.store.archive_keeper import keep
from tenant_events.store.reindex import reindex
from tenant_events.store.schema import SCHEMA_VERSION, connect
from tenant_events.values.retention import Retention

ACCESS = ("access_marks", "access_ends", "access_groups", "access_spans")
ARCHIVE = ("archive_files", "archive_garbage")
LATER = T0.timestamp() + 400 * 86400  # every simulated event is old enough to move
EVER = 2**62 - 1


def _stored(path: Path, n: int = 3000, seed: int = 7) -> list[tuple[object, ...]]:
    """A store of `n` simulated events, fully indexed; returns its access spans."""
    rows, _life = simulated_rows(n, seed=seed)
    writer = StoreWriter(path)
    try:
        for at in range(0, n, 500):
            writer.commit_sync(Batch(events=rows[at : at + 500], cursor=str(at)))
        writer.index_all_sync()
    finally:
        writer.close()
    return _spans(path)


def _spans(path: Path) -> list[tuple[object, ...]]:
    """Every span of the history: the live file's, and those settled into the archive folder (access_settle.py)."""
    conn = sqlite3.connect(path)
    try:
        spans = conn.execute(f"SELECT {SPAN_COLUMNS} FROM access_spans").fetchall()
        settled = listed(conn, path)
    finally:
        conn.close()
    if settled.files:
        cur = duck.cursor()
        try:
            query = f"SELECT {SPAN_COLUMNS} FROM read_parquet(?)"
            spans += cur.execute(query, [[str(p) for p in settled.files]]).fetchall()
        finally:
            cur.close()
    return sorted(spans)


def _tables(path: Path) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        conn.close()


@pytest.mark.parametrize("start", ["fresh", "main_at_6", "earlier_branch_at_6"])
def test_every_schema_6_opens_with_the_archive_catalog_and_the_access_history(tmp_path, start):
    """main's 6 is the archive's catalog; an earlier build of the access history also called its tables 6."""
    path = tmp_path / "t.sqlite3"
    spans = _stored(path)
    assert spans
    if start != "fresh":
        conn = sqlite3.connect(path, isolation_level=None)
        dropped = ACCESS if start == "main_at_6" else ARCHIVE
        for table in dropped:
            conn.execute(f"DROP TABLE {table}")
        conn.execute(
            "DELETE FROM counters WHERE name LIKE 'access_%'"
            if start == "main_at_6"
            else "DELETE FROM counters WHERE name = 'archived_upto'"
        )
        conn.execute("PRAGMA user_version = 6")
        conn.close()
        assert not set(dropped) & _tables(path)
    writer = StoreWriter(path)  # migrates to 7; the idle-time indexer fills a new history
    try:
        writer.index_all_sync()
        done = keep(writer, Retention(keep_live_days=30, settle_seconds=0), LATER)  # the catalog works
    finally:
        writer.close()
    assert set(ACCESS + ARCHIVE) <= _tables(path)
    conn = connect(path, readonly=True)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION >= 7
        assert snapshot(conn).upto > 0 and done.moved > 0
    finally:
        conn.close()
    assert _spans(path) == spans


def test_events_move_only_once_the_access_history_has_them(tmp_path):
    path = tmp_path / "t.sqlite3"
    _stored(path, 1000)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("UPDATE counters SET value = 400 WHERE name = 'access_upto'")  # as if the history lagged
    conn.close()
    conn = connect(path, readonly=True)
    try:
        assert move.eligible_upto(conn, Retention(keep_live_days=30, settle_seconds=0), LATER) == 400
    finally:
        conn.close()


@pytest.mark.parametrize("how", ["older_file", "reindex"])
def test_a_history_built_after_its_events_moved_reads_them_from_the_archive(tmp_path, how):
    """A file whose events were archived before this version kept the history, and `reindex`, which builds the
    history again: both end at the spans the live events gave, and answer with the moved events."""
    path = tmp_path / "t.sqlite3"
    spans = _stored(path)
    writer = StoreWriter(path)
    try:
        done = keep(writer, Retention(keep_live_days=30, settle_seconds=0), LATER)
    finally:
        writer.close()
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        assert done.moved > 2500 and conn.execute("SELECT count(*) FROM events").fetchone()[0] < 500
    finally:
        conn.close()
    if how == "reindex":
        reindex(path)
    else:  # as main's schema 6 left it, after moving: no history, the events in the archive
        conn = sqlite3.connect(path, isolation_level=None)
        for table in ACCESS:
            conn.execute(f"DROP TABLE {table}")
        conn.execute("DELETE FROM counters WHERE name LIKE 'access_%'")
        conn.execute("PRAGMA user_version = 6")
        conn.close()
        writer = StoreWriter(path)
        try:
            writer.index_all_sync()
        finally:
            writer.close()
    assert _spans(path) == spans
    rows, _life = simulated_rows(3000, seed=7)
    with AccessReader(path) as reader:
        now = reader.held_at(EVER)
        began = reader.events(s.since_seq for s in now.spans)
    assert now.reach.first_ms == rows[0].time_ms and now.reach.newest_ms == max(r.time_ms for r in rows)
    assert now.spans and {s.since_seq for s in now.spans} == set(began)
    moved = [s for s in now.spans if s.since_seq <= done.moved]
    assert moved and all(began[s.since_seq].type.endswith((".added", ".assigned")) for s in moved)
    assert all(began[s.since_seq].event_id == rows[s.since_seq - 1].event_id for s in moved)


def _directory(path: Path) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]], int]:
    conn = sqlite3.connect(path)
    try:
        upto = conn.execute("SELECT value FROM counters WHERE name = 'directory_upto'").fetchone()[0]
        return (
            sorted(conn.execute("SELECT * FROM entities")),
            sorted(conn.execute("SELECT * FROM links")),
            upto,
        )
    finally:
        conn.close()


@pytest.mark.parametrize("live_left", [True, False])
def test_reindex_builds_the_directory_from_both_tiers(tmp_path, live_left):
    """`reindex` after events moved: the entity directory is the one the events gave it as they came, archived
    ones included (it read the live table only, and lost every entity only archived events named); with every
    event archived too (the upkeep then also settled the directory's past into the archive folder: `reindex`
    builds it whole again, live)."""
    path = tmp_path / "t.sqlite3"
    _stored(path)
    before = _directory(path)  # as the events gave it as they came
    # a cap on live rows leaves the newest 1000 live; the default keeps none (every event is old enough)
    policy = Retention(keep_live_days=36500, max_live_rows=1000, settle_seconds=0)
    writer = StoreWriter(path)
    try:
        keep(writer, policy if live_left else Retention(keep_live_days=30, settle_seconds=0), LATER)
    finally:
        writer.close()
    assert (_directory(path) == before) is live_left  # (every event old: the directory's past settled)
    conn = sqlite3.connect(path)
    try:
        live = conn.execute("SELECT count(*) FROM events").fetchone()[0]
    finally:
        conn.close()
    assert (0 < live < 1500) if live_left else live == 0, live
    assert len(before[0]) > 100 and before[2] == 3000
    reindex(path)
    assert _directory(path) == before
