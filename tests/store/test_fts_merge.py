"""The live full-text index keeps the size of the live rows once events move to the archive: the rows removed
from it are merged away in short idle steps (docs/archive.md "Moving"), under steady traffic too."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from helpers.history import fill_store, history
from helpers.slack import bound
from tenant_events.store import Batch, StoreWriter, fts_merge
from tenant_events.store.archive_keeper import keep
from tenant_events.store.schema import connect
from tenant_events.values.retention import Retention

DAY = 86400.0
NOW = time.time()
KEEP = Retention(keep_live_days=30, settle_seconds=0)


def _settled(path: Path) -> bool:
    """The moved rows are out of the live index and the merge that follows is done."""
    conn = connect(path, readonly=True)
    try:
        left = conn.execute("SELECT count(*) FROM archive_files WHERE fts_upto >= first_seq").fetchone()[0]
        return not left and not fts_merge.due(conn)
    finally:
        conn.close()


def _wait_settled(path: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not _settled(path):
        assert time.monotonic() < deadline, "the live full-text index still holds what left it"
        time.sleep(0.05)


def _index_bytes(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT sum(length(block)) FROM events_fts_data").fetchone()[0])


def _bytes_and_least(path: Path) -> tuple[int, int]:
    """The live index's bytes, and those of the same index merged whole (FTS5's 'optimize', on a copy)."""
    source = connect(path, readonly=True)
    copy = sqlite3.connect(":memory:")
    try:
        source.backup(copy)
        copy.execute("INSERT INTO events_fts (events_fts) VALUES ('integrity-check')")
        copy.execute("INSERT INTO events_fts (events_fts) VALUES ('optimize')")
        return _index_bytes(source), _index_bytes(copy)
    finally:
        copy.close()
        source.close()


def test_the_live_index_shrinks_to_the_live_rows_after_a_move(tmp_path):
    """Two thirds of the rows move to the archive; once the writer has been idle the live index is about the
    size of the same index merged whole. Only delete markers were added before: it kept every moved row's
    entries, three times the size."""
    path = tmp_path / "t.sqlite3"
    fill_store(path, 3000, 90, NOW)
    writer = StoreWriter(path)
    try:
        assert keep(writer, KEEP, NOW).moved > 1500
        _wait_settled(path, bound(60))
        merged_in_steps = writer.merger.longest_step > 0  # (not by one 'optimize')
    finally:
        writer.close()
    size, least = _bytes_and_least(path)
    assert size <= least * 1.25, (size, least)
    assert merged_in_steps


def test_the_moved_rows_are_removed_and_merged_away_under_steady_event_traffic(tmp_path):
    """Events committed every 0.1 s keep the writer from ever being idle, and indexing pending after each batch:
    the clean-up and the merge still take their turns (at least one chunk every couple of seconds). Indexing
    took every such turn, and the archived rows stayed in the live index for as long as events came."""
    path = tmp_path / "t.sqlite3"
    fill_store(path, 3000, 90, NOW)
    live = history(6000, NOW - 7200, 1.0, seed=2)
    writer = StoreWriter(path)
    stop = threading.Event()

    def traffic() -> None:
        for n, row in enumerate(live):
            if stop.wait(0.1):
                return
            writer.submit(Batch(events=[row], cursor=f"live-{n}"))

    flowing = threading.Thread(target=traffic, daemon=True)
    try:
        flowing.start()
        assert keep(writer, KEEP, NOW).moved > 1500
        _wait_settled(path, bound(90))
        assert flowing.is_alive(), "the traffic ended before the index was merged: the test proves nothing"
    finally:
        stop.set()
        flowing.join()
        writer.close()
    size, least = _bytes_and_least(path)
    assert size <= least * 1.25, (size, least)
